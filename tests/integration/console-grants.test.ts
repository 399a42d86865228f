// Roles per workflow (Z1, Z2, A4): a person holds operator on one workflow and support on another
// and nothing on a third. Every console action is called directly, as the server action, and every
// read model with the person's scope: what they may do, they do; what they may not is refused (403)
// and audited with nothing changed; what belongs to a workflow they hold no role in is invisible.
import { beforeAll, describe, expect, it } from 'vitest';
import { asConsoleRequest } from '../helpers/console-request.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, snapshot, suffix } from '../helpers/factories.ts';
import { seenOf, seenOfKeys } from '../helpers/seen.ts';
import { resetEnvCache } from '@/lib/env.ts';
import type { Role } from '@/lib/db/generated/enums.ts';
import type { WorkflowScope } from '@/lib/auth/grants.ts';

let t: TestDatabase;
let actions: typeof import('@/app/actions/ledger.ts') & typeof import('@/app/actions/admin.ts');
let auth: typeof import('@/lib/auth/request.ts') & typeof import('@/lib/auth/session.ts');
let insertUser: typeof import('@/lib/auth/users.ts').insertUser;
let ledger: typeof import('@/lib/ledger/index.ts');
let guard: typeof import('@/lib/auth/guard.ts');
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
type Person = { id: string; email: string; sessionVersion: number };
const people = {} as Record<'admin' | 'mixed' | 'scopedAdmin', Person>;
const wf = { ops: `welcome_${suffix()}`, sup: `billing_${suffix()}`, none: `other_${suffix()}` };
const mixedScope = (): WorkflowScope => ({ all: false, workflows: [wf.sup, wf.ops].sort() });

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 10 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'console-grants-test-secret';
  resetEnvCache();
  actions = { ...(await import('@/app/actions/ledger.ts')), ...(await import('@/app/actions/admin.ts')) };
  auth = { ...(await import('@/lib/auth/request.ts')), ...(await import('@/lib/auth/session.ts')) };
  insertUser = (await import('@/lib/auth/users.ts')).insertUser;
  ledger = await import('@/lib/ledger/index.ts');
  guard = await import('@/lib/auth/guard.ts');
  for (const [name, role] of [
    ['admin', 'admin'],
    ['mixed', 'operator'],
    ['scopedAdmin', 'admin'],
  ] as const) {
    const u = await insertUser(
      t.db,
      { email: `${name.toLowerCase()}-${suffix()}@example.com`, name, role, password: 'a-long-enough-password' },
      system,
    );
    people[name] = { id: u.id, email: u.email, sessionVersion: u.sessionVersion };
  }
  // Each workflow has a run, so grants on them need no "new workflow" confirmation.
  for (const w of Object.values(wf)) await makeRun(t.db, w);
  // mixed: operator on wf.ops, support on wf.sup, nothing on wf.none; scopedAdmin: admin on wf.ops only.
  await setGrants('mixed', [
    ['operator', wf.ops],
    ['support', wf.sup],
  ]);
  await setGrants('scopedAdmin', [['admin', wf.ops]]);
});

/** Replaces a person's grants through the admin's own server actions. */
async function setGrants(who: 'mixed' | 'scopedAdmin', grants: [Role, string | null][]) {
  for (const [role, workflow] of grants) {
    const r = await as('admin', () =>
      actions.addGrantAction({ userId: people[who].id, role, workflow, reason: 'their team' }),
    );
    expect(r).toMatchObject({ ok: true });
  }
  const all = await t.db.roleGrant.findMany({ where: { userId: people[who].id, workflow: null } });
  for (const g of all) {
    expect(await as('admin', () => actions.removeGrantAction({ grantId: g.id, reason: 'scoped now' }))).toMatchObject({
      ok: true,
    });
  }
}

async function as<T>(who: keyof typeof people, fn: () => Promise<T>): Promise<T> {
  const cookie = `next-auth.session-token=${await auth.mintSessionToken(people[who])}`;
  return asConsoleRequest(auth.runWithRequest, cookie, fn);
}

async function effectIn(workflow: string, state: 'done' | 'unknown') {
  return makeEffect(t.db, state, { runId: (await makeRun(t.db, workflow)).runId });
}

async function planIn(workflow: string) {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db, workflow);
  const plan = await ledger.submitPlan(
    { db: t.db, actor: system },
    {
      runId: run.runId,
      items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `g-${suffix()}@example.com` }],
    },
  );
  return { ...plan, runId: run.runId };
}

describe('Z1: grants follow the role a person was created with', () => {
  it('Z1: a new user holds their role on all workflows; a role change swaps that grant', async () => {
    const u = await insertUser(
      t.db,
      { email: `new-${suffix()}@example.com`, name: 'n', role: 'auditor', password: 'a-long-enough-password' },
      system,
    );
    const grants = () => t.db.roleGrant.findMany({ where: { userId: u.id }, select: { role: true, workflow: true } });
    expect(await grants()).toEqual([{ role: 'auditor', workflow: null }]);
    expect(
      await as('admin', () => actions.updateUserAction({ userId: u.id, role: 'support', reason: 'moved team' })),
    ).toMatchObject({ ok: true });
    expect(await grants()).toEqual([{ role: 'support', workflow: null }]);
  });
});

describe('Z1/Z2: each action is checked against the roles held on its workflow', () => {
  it('Z2: operator on one workflow revokes there; the same person is refused (403, audited) elsewhere', async () => {
    const mine = await effectIn(wf.ops, 'done');
    expect(
      await as('mixed', async () =>
        actions.revokeAction({ keys: [mine.key], reason: 'asked', seen: await seenOfKeys(t.db, [mine.key]) }),
      ),
    ).toMatchObject({
      ok: true,
    });
    for (const w of [wf.sup, wf.none]) {
      const other = await effectIn(w, 'done');
      const before = await snapshot(t.db);
      const r = await as('mixed', async () =>
        actions.revokeAction({ keys: [other.key], reason: 'asked', seen: await seenOfKeys(t.db, [other.key]) }),
      );
      expect(r).toMatchObject({ ok: false, code: 'forbidden' });
      expect(await snapshot(t.db)).toEqual(before);
      const refusal = await t.db.auditEntry.findFirst({ where: { chain: `refused:effect:${other.key}` } });
      expect(refusal).toMatchObject({ outcome: 'refused', action: 'effect.revoke', runId: other.runId });
    }
  });

  it('Z2: a bulk revoke spanning a workflow without the role is refused as a whole', async () => {
    const a = await effectIn(wf.ops, 'done');
    const b = await effectIn(wf.none, 'done');
    const r = await as('mixed', async () =>
      actions.revokeAction({ keys: [a.key, b.key], reason: 'asked', seen: await seenOfKeys(t.db, [a.key, b.key]) }),
    );
    expect(r).toMatchObject({ ok: false, code: 'forbidden' });
    expect((await t.db.effectKey.findUnique({ where: { key: a.key } }))!.state).toBe('done');
  });

  it('Z1: support on one workflow resolves unknowns there and nowhere else; plan approval follows operator', async () => {
    const sup = await effectIn(wf.sup, 'unknown');
    const resolve = async (key: string) => {
      const seen = await seenOf(t.db, key);
      return as('mixed', async () =>
        actions.resolveUnknownAction({ key, outcome: 'sent', receipt: 'msg_1', reason: 'seen in provider log', seen }),
      );
    };
    expect(await resolve(sup.key)).toMatchObject({ ok: true });
    expect(await resolve((await effectIn(wf.ops, 'unknown')).key)).toMatchObject({ ok: false, code: 'forbidden' });
    const ok = await planIn(wf.ops);
    expect(
      await as('mixed', async () =>
        actions.approvePlanAction({ planId: ok.planId, itemsHash: ok.itemsHash, seenStatus: 'submitted' }),
      ),
    ).toMatchObject({ ok: true });
    for (const w of [wf.sup, wf.none]) {
      const p = await planIn(w);
      const r = await as('mixed', async () =>
        actions.approvePlanAction({ planId: p.planId, itemsHash: p.itemsHash, seenStatus: 'submitted' }),
      );
      expect(r).toMatchObject({ ok: false, code: 'forbidden' });
      expect((await t.db.plan.findUnique({ where: { id: p.planId } }))!.status).toBe('submitted');
    }
  });

  it('Z1: a bulk resolve is checked on the workflows of every key: support elsewhere does not reach them', async () => {
    // Two or more keys once named no effect the guard could find, so any support grant anywhere passed.
    for (const w of [wf.ops, wf.none]) {
      const a = await effectIn(w, 'unknown');
      const b = await effectIn(w, 'unknown');
      const before = await snapshot(t.db);
      const refusals = () => t.db.auditEntry.count({ where: { outcome: 'refused', action: 'effect.resolve' } });
      const refusedBefore = await refusals();
      const r = await as('mixed', async () =>
        actions.resolveManyAction({
          keys: [a.key, b.key],
          outcome: 'sent',
          receipt: 'export-1',
          reason: 'log',
          seen: await seenOfKeys(t.db, [a.key, b.key]),
        }),
      );
      expect(r).toMatchObject({ ok: false, code: 'forbidden' });
      expect(await snapshot(t.db)).toEqual(before);
      expect(await refusals()).toBe(refusedBefore + 1);
    }
    const a = await effectIn(wf.sup, 'unknown');
    const b = await effectIn(wf.sup, 'unknown');
    const r = await as('mixed', async () =>
      actions.resolveManyAction({
        keys: [a.key, b.key],
        outcome: 'not_sent',
        reason: 'not in the provider log',
        seen: await seenOfKeys(t.db, [a.key, b.key]),
      }),
    );
    expect(r).toMatchObject({ ok: true, data: { resolved: 2, failed: [] } });
  });

  it("Z8: a bulk resolve carries each row's version: a key another person resolved since is refused alone, the rest resolve", async () => {
    const a = await effectIn(wf.sup, 'unknown');
    const b = await effectIn(wf.sup, 'unknown');
    const seenOf = async (key: string) => {
      const k = await t.db.effectKey.findUniqueOrThrow({ where: { key } });
      return { epoch: k.currentEpoch, state: k.state, changedAt: k.changedAt!.toISOString() };
    };
    const seen = { [a.key]: await seenOf(a.key), [b.key]: await seenOf(b.key) };
    const colleague = {
      kind: 'user' as const,
      id: people.admin.id,
      label: people.admin.email,
      role: 'support' as const,
    };
    await ledger.resolveUnknown(
      { db: t.db, actor: colleague },
      { key: b.key, outcome: 'not_sent', reason: 'not in the provider log' },
    );
    const r = await as('mixed', async () =>
      actions.resolveManyAction({ keys: [a.key, b.key], outcome: 'sent', receipt: 'export-2', reason: 'log', seen }),
    );
    expect(r).toMatchObject({ ok: true, data: { resolved: 1, failed: [{ key: b.key }] } });
    expect((await t.db.effectKey.findUnique({ where: { key: a.key } }))!.state).toBe('done');
    expect((await t.db.effectKey.findUnique({ where: { key: b.key } }))!.state).toBe('pending');
  });

  it("Z1/Z8: a bump request may carry the versions of its own keys only: a version of another workflow's key is refused unread", async () => {
    const mine = await effectIn(wf.ops, 'done');
    const hidden = await effectIn(wf.none, 'done');
    const before = await snapshot(t.db);
    const r = await as('mixed', async () =>
      actions.requestBumpAction({
        keys: [mine.key],
        reason: 'resend',
        seen: { [hidden.key]: { epoch: 1, state: 'none', changedAt: null } },
      }),
    );
    expect(r).toMatchObject({ ok: false, code: 'validation', field: 'seen' });
    expect(JSON.stringify(r)).not.toContain('done');
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('Z1: admin on one workflow is not an admin: users, keys and tools need an all-workflows grant', async () => {
    const r = await as('scopedAdmin', () =>
      actions.addGrantAction({ userId: people.scopedAdmin.id, role: 'admin', workflow: null, reason: 'me' }),
    );
    expect(r).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await t.db.roleGrant.count({ where: { userId: people.scopedAdmin.id, workflow: null } })).toBe(0);
  });
});

describe('Z1: read models show only the workflows a person holds a role in', () => {
  it('Z1: lists, counts, details, plans, approvals, support items and audit entries of other workflows are hidden', async () => {
    const { listRuns } = await import('@/lib/read-models/runs.ts');
    const { runHeader } = await import('@/lib/read-models/run-detail.ts');
    const { targetDetail } = await import('@/lib/read-models/target.ts');
    const { supportQueue } = await import('@/lib/read-models/support.ts');
    const { auditPage } = await import('@/lib/read-models/audit.ts');
    const { auditExportStream } = await import('@/lib/read-models/audit-export.ts');
    const { submittedPlans } = await import('@/lib/read-models/admin.ts');
    const { latestPlanReview } = await import('@/lib/read-models/plan-review.ts');
    const scope = mixedScope();
    const hidden = await effectIn(wf.none, 'unknown');
    const seen = await effectIn(wf.sup, 'unknown');
    const hiddenPlan = await planIn(wf.none);

    const runs = await listRuns(t.db, { limit: 100 }, scope);
    expect(new Set(runs.rows.map((r) => r.workflow))).toEqual(new Set([wf.ops, wf.sup]));
    expect(runs.workflows).not.toContain(wf.none);
    expect(await runHeader(t.db, hidden.runId, scope)).toBeNull();
    expect(await runHeader(t.db, seen.runId, scope)).not.toBeNull();
    expect(await targetDetail(t.db, hidden.key, scope)).toBeNull();
    expect(await latestPlanReview(t.db, hiddenPlan.runId, scope)).toBeNull();
    expect((await submittedPlans(t.db, scope)).map((p) => p.id)).not.toContain(hiddenPlan.planId);

    const queue = await supportQueue(t.db, scope, { limit: 200 });
    const keys = queue.rows.map((r) => r.key);
    expect(keys).toContain(seen.key);
    expect(keys).not.toContain(hidden.key);
    const everyUnknown = await t.db.effectKey.count({ where: { state: 'unknown' } });
    expect(queue.total).toBe(queue.rows.length);
    expect(queue.total).toBeLessThan(everyUnknown);

    const page = await auditPage(t.db, {}, scope, undefined, 200);
    expect(page.rows.length).toBeGreaterThan(0);
    expect(page.rows.some((r) => r.runId === hidden.runId)).toBe(false);
    expect(page.rows.some((r) => r.runId === seen.runId)).toBe(true);
    expect(page.rows.every((r) => r.runId !== null)).toBe(true);
    const exported: (string | null)[] = [];
    for await (const e of auditExportStream(t.db, {}, scope)) exported.push(e.run_id);
    expect(exported).toContain(seen.runId);
    expect(exported).not.toContain(hidden.runId);
    expect(exported).not.toContain(null);
  });

  it('Z1: a read by id of something in another workflow answers like a missing one', async () => {
    const hidden = await effectIn(wf.none, 'done');
    const viewer = { db: t.db, scope: mixedScope() };
    await expect(guard.assertVisible(viewer, 'run', hidden.runId)).rejects.toMatchObject({ code: 'not_found' });
    await expect(guard.assertVisible(viewer, 'effect', hidden.key)).rejects.toMatchObject({ code: 'not_found' });
    const seen = await effectIn(wf.ops, 'done');
    await expect(guard.assertVisible(viewer, 'run', seen.runId)).resolves.toEqual([wf.ops]);
  });
});

describe('Z1: the replay routes answer a replay of another workflow like a missing one', () => {
  async function replayIn(workflow: string) {
    const replay = await import('@/lib/replay/index.ts');
    const p = await planIn(workflow);
    const admin = { kind: 'user' as const, id: people.admin.id, label: people.admin.email, role: 'operator' as const };
    await ledger.approvePlan({ db: t.db, actor: admin }, { planId: p.planId, itemsHash: p.itemsHash, reason: 'ok' });
    const ctx = { db: t.db, actor: admin, jobs: { insert: async () => undefined } };
    return replay.requestReplay(ctx, { runId: p.runId, confirmCount: 1, reason: 'crashed run' });
  }

  it('Z1: the report download (CSV and JSON) and the progress of a replay are 404 outside the person’s workflows', async () => {
    const routes = {
      report: await import('@/app/api/console/replays/[replayId]/report/route.ts'),
      progress: await import('@/app/api/console/replays/[replayId]/progress/route.ts'),
    };
    const get = async (route: keyof typeof routes, replayId: string, query = '') => {
      const cookie = `next-auth.session-token=${await auth.mintSessionToken(people.mixed)}`;
      const url = `http://console.test/api/console/replays/${replayId}/${route}${query}`;
      const res = await routes[route].GET(new Request(url, { headers: { host: 'console.test', cookie } }), {
        params: Promise.resolve({ replayId }),
      });
      return { status: res.status, body: await res.text() };
    };
    const hidden = await replayIn(wf.none);
    for (const [route, query] of [
      ['report', '?format=csv'],
      ['report', '?format=json'],
      ['progress', ''],
    ] as const) {
      const res = await get(route, hidden.replayId, query);
      expect(res.status, `${route}${query}`).toBe(404);
      expect(res.body).not.toContain('@example.com');
    }
    const seen = await replayIn(wf.ops);
    const report = await get('report', seen.replayId, '?format=json');
    expect(report.status).toBe(200);
    expect(JSON.parse(report.body)).toMatchObject({ report: { replayId: seen.replayId } });
  });
});

describe('Z1: admins edit grants; every change is audited and the last all-workflows admin stays', () => {
  it('Z1: a grant added and removed is on the trail, and counts from the very next request', async () => {
    const p = await planIn(wf.none);
    const approve = () =>
      as('mixed', async () =>
        actions.approvePlanAction({ planId: p.planId, itemsHash: p.itemsHash, seenStatus: 'submitted' }),
      );
    expect(await approve()).toMatchObject({ ok: false, code: 'forbidden' });
    const added = await as('admin', () =>
      actions.addGrantAction({ userId: people.mixed.id, role: 'operator', workflow: wf.none, reason: 'covering' }),
    );
    if (!added.ok) throw new Error(added.error);
    const entry = await t.db.auditEntry.findFirst({
      where: { chain: `user:${people.mixed.id}`, action: 'user.grant' },
      orderBy: { id: 'desc' },
    });
    expect(entry).toMatchObject({ outcome: 'ok', reason: 'covering', actorId: people.admin.id });
    expect(entry!.afterState).toContain(`Operator on ${wf.none}`);
    const removed = await as('admin', () => actions.removeGrantAction({ grantId: added.data.id, reason: 'back' }));
    expect(removed).toMatchObject({ ok: true });
    expect(await approve()).toMatchObject({ ok: false, code: 'forbidden' });
    expect(
      await t.db.auditEntry.count({
        where: { chain: `user:${people.mixed.id}`, action: 'user.ungrant', reason: 'back' },
      }),
    ).toBe(1);
    // And with the grant in place the same action goes through.
    await as('admin', () =>
      actions.addGrantAction({ userId: people.mixed.id, role: 'operator', workflow: wf.none, reason: 'again' }),
    );
    expect(await approve()).toMatchObject({ ok: true });
  });

  it('Z1: the last all-workflows admin cannot be removed, disabled or re-roled', async () => {
    const admins = await t.db.roleGrant.findMany({ where: { role: 'admin', workflow: null } });
    expect(admins.map((g) => g.userId)).toEqual([people.admin.id]);
    const other = await insertUser(
      t.db,
      { email: `second-${suffix()}@example.com`, name: 's', role: 'admin', password: 'a-long-enough-password' },
      system,
    );
    const otherAdmin = { id: other.id, email: other.email, sessionVersion: other.sessionVersion };
    const firstGrant = admins[0]!;
    const cookie = `next-auth.session-token=${await auth.mintSessionToken(otherAdmin)}`;
    const byOther = <T>(fn: () => Promise<T>) => asConsoleRequest(auth.runWithRequest, cookie, fn, '203.0.113.8');
    // The second admin takes away the first admin's all-workflows grant: allowed, one remains.
    expect(
      await byOther(() => actions.removeGrantAction({ grantId: firstGrant.id, reason: 'handover' })),
    ).toMatchObject({ ok: true });
    const last = await t.db.roleGrant.findFirstOrThrow({ where: { userId: other.id, role: 'admin', workflow: null } });
    // Now `other` is the last one: their own grant, their disabling and their re-roling are refused.
    expect(await byOther(() => actions.removeGrantAction({ grantId: last.id, reason: 'oops' }))).toMatchObject({
      ok: false,
    });
    const { assertAnotherAllWorkflowsAdmin } = await import('@/lib/auth/grant-commands.ts');
    await expect(t.db.$transaction((tx) => assertAnotherAllWorkflowsAdmin(tx, other.id))).rejects.toMatchObject({
      code: 'conflict',
    });
    // The first admin, without an all-workflows grant, may no longer manage anyone.
    const r = await as('admin', () => actions.removeGrantAction({ grantId: last.id, reason: 'take over' }));
    expect(r).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await t.db.roleGrant.count({ where: { role: 'admin', workflow: null } })).toBe(1);
    // Restore for the other tests' setup helper.
    expect(
      await byOther(() =>
        actions.addGrantAction({ userId: people.admin.id, role: 'admin', workflow: null, reason: 'restore' }),
      ),
    ).toMatchObject({ ok: true });
  });
});
