// Four-eyes requests under roles per workflow (Z1, Z2, Z3): a bump request is about every workflow its
// keys belong to, not only the run of its first key. Deciding it bumps each key, so the decider needs
// operator on each of those workflows, and the approvals page lists the request, and offers the
// decision, on the same terms.
import { beforeAll, describe, expect, it } from 'vitest';
import { asConsoleRequest } from '../helpers/console-request.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, suffix, userActor } from '../helpers/factories.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { canOnEach, type WorkflowScope } from '@/lib/auth/grants.ts';

let t: TestDatabase;
let actions: typeof import('@/app/actions/ledger.ts');
let auth: typeof import('@/lib/auth/request.ts') & typeof import('@/lib/auth/session.ts');
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const wf = { mine: `mine_${suffix()}`, other: `other_${suffix()}` };
// Operator on wf.mine only; sees wf.other through an auditor grant there.
let scoped: { id: string; email: string; sessionVersion: number };
const scopedView: WorkflowScope = { all: false, workflows: [wf.mine, wf.other].sort() };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'console-grants-approvals-test-secret';
  resetEnvCache();
  actions = await import('@/app/actions/ledger.ts');
  auth = { ...(await import('@/lib/auth/request.ts')), ...(await import('@/lib/auth/session.ts')) };
  const { insertUser } = await import('@/lib/auth/users.ts');
  const { addGrant, removeGrant } = await import('@/lib/auth/grant-commands.ts');
  const u = await insertUser(
    t.db,
    { email: `scoped-${suffix()}@example.com`, name: 'scoped', role: 'operator', password: 'a-long-enough-password' },
    system,
  );
  scoped = { id: u.id, email: u.email, sessionVersion: u.sessionVersion };
  for (const w of Object.values(wf)) await makeRun(t.db, w);
  const admin = { db: t.db, actor: userActor('admin') };
  await addGrant(admin, { userId: u.id, role: 'operator', workflow: wf.mine, reason: 'their team' });
  await addGrant(admin, { userId: u.id, role: 'auditor', workflow: wf.other, reason: 'reads it' });
  const all = await t.db.roleGrant.findFirstOrThrow({ where: { userId: u.id, workflow: null } });
  await removeGrant(admin, { grantId: all.id, reason: 'scoped now' });
});

function asScoped<T>(fn: () => Promise<T>): Promise<T> {
  return auth
    .mintSessionToken(scoped)
    .then((token) => asConsoleRequest(auth.runWithRequest, `next-auth.session-token=${token}`, fn, '203.0.113.9'));
}

async function doneIn(workflow: string) {
  return makeEffect(t.db, 'done', { runId: (await makeRun(t.db, workflow)).runId });
}

/** An open four-eyes request by another (all-workflows) operator over these keys, in this order. */
async function requestOver(keys: string[]) {
  const { requestBump } = await import('@/lib/approvals/request-bump.ts');
  const r = await requestBump({ db: t.db, actor: userActor('operator') }, { keys, reason: 'template fixed' });
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  return r;
}

describe('Z1/Z3: four-eyes requests are decided on every workflow they touch', () => {
  it('Z2: a request whose first key is in my workflow but which also bumps another workflow is refused, nothing bumped', async () => {
    const mine = await doneIn(wf.mine);
    const theirs = await doneIn(wf.other);
    const r = await requestOver([mine.key, theirs.key]);
    const decided = await asScoped(() =>
      actions.decideBumpAction({ requestId: r.requestId, setHash: r.setHash, decision: 'approve', seenStatus: 'open' }),
    );
    expect(decided).toMatchObject({ ok: false, code: 'forbidden' });
    const epochs = await t.db.effectKey.findMany({ where: { key: { in: [mine.key, theirs.key] } } });
    expect(epochs.map((k) => k.currentEpoch)).toEqual([1, 1]);
    expect((await t.db.approvalRequest.findUniqueOrThrow({ where: { id: r.requestId } })).status).toBe('open');

    // One in my workflow alone goes through.
    const own = await requestOver([(await doneIn(wf.mine)).key]);
    expect(
      await asScoped(() =>
        actions.decideBumpAction({
          requestId: own.requestId,
          setHash: own.setHash,
          decision: 'approve',
          seenStatus: 'open',
        }),
      ),
    ).toMatchObject({ ok: true });
  });

  it("Z1: the approvals page names each request's workflows, so it offers the decision only where the server allows it", async () => {
    const { approvalsPage } = await import('@/lib/read-models/admin.ts');
    const grants = (await t.db.roleGrant.findMany({ where: { userId: scoped.id } })).map((g) => ({
      role: g.role,
      workflow: g.workflow,
    }));
    const mixed = await requestOver([(await doneIn(wf.mine)).key, (await doneIn(wf.other)).key]);
    const theirs = await requestOver([(await doneIn(wf.other)).key]);
    const own = await requestOver([(await doneIn(wf.mine)).key]);
    const rows = new Map((await approvalsPage(t.db, scopedView)).map((r) => [r.id, r]));
    expect(rows.get(mixed.requestId)?.workflows).toEqual([wf.mine, wf.other].sort());
    expect(rows.get(theirs.requestId)?.workflows).toEqual([wf.other]);
    expect(rows.get(own.requestId)?.workflows).toEqual([wf.mine]);
    const offered = (id: string) => canOnEach(grants, 'effect.bump.approve', rows.get(id)!.workflows);
    expect([offered(mixed.requestId), offered(theirs.requestId), offered(own.requestId)]).toEqual([false, false, true]);
    // Someone who sees only wf.mine does not see the request that also bumps wf.other.
    const narrow = await approvalsPage(t.db, { all: false, workflows: [wf.mine] });
    expect(narrow.map((r) => r.id)).not.toContain(mixed.requestId);
    expect(narrow.map((r) => r.id)).toContain(own.requestId);
  });

  it('Z1: a decided request over two workflows stays hidden from someone who sees one, its audit entries too', async () => {
    const { approvalsPage } = await import('@/lib/read-models/admin.ts');
    const mixed = await requestOver([(await doneIn(wf.mine)).key, (await doneIn(wf.other)).key]);
    const own = await requestOver([(await doneIn(wf.mine)).key]);
    await t.owner(`UPDATE approval_request SET status = 'rejected', decided_at = now() WHERE id = ANY($1::uuid[])`, [
      [mixed.requestId, own.requestId],
    ]);
    const narrow = (await approvalsPage(t.db, { all: false, workflows: [wf.mine] })).map((r) => r.id);
    expect(narrow).not.toContain(mixed.requestId);
    expect(narrow).toContain(own.requestId);
    // Filed under no run: its entries are about no workflow, seen with an all-workflows grant only.
    const entries = await t.owner<{ run_id: string | null }>(`SELECT run_id FROM audit_entry WHERE subject_id = $1`, [
      mixed.requestId,
    ]);
    expect(entries.rows.length).toBeGreaterThan(0);
    expect(entries.rows.every((e) => e.run_id === null)).toBe(true);
  });
});
