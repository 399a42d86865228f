// Z8 for the decisions on requests and sets: a four-eyes approval or rejection carries the request's
// status, a plan decision the plan's status and items hash, a replay request the set's hash. If
// another person decided or the set moved meanwhile, nothing is written and the StaleDecision names
// the new status, who decided and when; on the current version the decision goes through.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, snapshot, suffix } from '../helpers/factories.ts';
import { makeCampaign } from './replay-fixtures.ts';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { approvePlan, rejectPlan, revokeEffect, StaleDecision, submitPlan, type Actor } from '@/lib/ledger/index.ts';
import { approveReplay, rejectReplay, requestReplay } from '@/lib/replay/index.ts';
import { summarizeSet } from '@/lib/replay/set.ts';

const t = await createTestDatabase({ poolSize: 6 });
const system: Actor = { kind: 'system', id: 'test', label: 'test setup' };

/** A real console user, so "by whom" can name them. */
async function operator(): Promise<Actor & { kind: 'user' }> {
  const email = `op-${suffix()}@example.com`;
  const u = await insertUser(t.db, { email, name: 'Op', role: 'operator', password: 'a-long-enough-password' }, system);
  return { kind: 'user', id: u.id, label: email, role: 'operator' };
}
const [alice, bob, carol] = [await operator(), await operator(), await operator()];

async function expectStale(decide: () => Promise<unknown>) {
  const before = await snapshot(t.db);
  const [approvals, replays] = [await t.db.approvalRequest.count(), await t.db.replay.count()];
  const error = await decide().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StaleDecision);
  expect(await snapshot(t.db)).toEqual(before);
  expect([await t.db.approvalRequest.count(), await t.db.replay.count()]).toEqual([approvals, replays]);
  return (error as StaleDecision).stale;
}

async function bumpRequest() {
  const e = await makeEffect(t.db, 'done');
  const r = await requestBump({ db: t.db, actor: alice }, { keys: [e.key], reason: 'resend after template fix' });
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  return r;
}

async function submittedPlan() {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  return submitPlan(
    { db: t.db, actor: { kind: 'runtime', id: 'rt', label: 'run-42', workflows: ['*'] } },
    {
      runId: run.runId,
      items: [{ tool: tool.name, action: 'receipt', recordId: 'r1', target: `p-${suffix()}@example.com` }],
    },
  );
}

describe('Z8: decisions on requests, plans and sets carry the version the person saw', () => {
  it('Z8: approving or rejecting a bump request another operator rejected meanwhile is stale, naming who and when', async () => {
    const r = await bumpRequest();
    const seen = { requestId: r.requestId, setHash: r.setHash, seenStatus: 'open' as const };
    await decideBump({ db: t.db, actor: carol }, { ...seen, decision: 'reject', reason: 'not now' });
    const facts = await expectStale(() => decideBump({ db: t.db, actor: bob }, { ...seen, decision: 'approve' }));
    expect(facts).toMatchObject({
      subjectType: 'approval',
      was: { state: 'open' },
      now: { state: 'rejected' },
      changedBy: carol.label,
      retry: {},
    });
    expect(facts.changedAt).not.toBeNull();
    await expectStale(() => decideBump({ db: t.db, actor: bob }, { ...seen, decision: 'reject', reason: 'no' }));

    const open = await bumpRequest();
    expect(
      await decideBump(
        { db: t.db, actor: bob },
        { requestId: open.requestId, setHash: open.setHash, seenStatus: 'open', decision: 'approve' },
      ),
    ).toMatchObject({ decision: 'approve', bumped: 1 });
  });

  it('Z8: approving or rejecting a plan another operator decided meanwhile is stale; a submitted plan is decided', async () => {
    const p = await submittedPlan();
    await rejectPlan({ db: t.db, actor: carol }, { planId: p.planId, reason: 'wrong list' });
    const seen = { planId: p.planId, itemsHash: p.itemsHash, seenStatus: 'submitted' as const };
    const facts = await expectStale(() => approvePlan({ db: t.db, actor: bob }, seen));
    expect(facts).toMatchObject({
      subjectType: 'plan',
      was: { state: 'submitted' },
      now: { state: 'rejected' },
      changedBy: carol.label,
      retry: {},
    });
    await expectStale(() => rejectPlan({ db: t.db, actor: bob }, { ...seen, reason: 'also no' }));

    const q = await submittedPlan();
    expect(
      await approvePlan(
        { db: t.db, actor: bob },
        { planId: q.planId, itemsHash: q.itemsHash, seenStatus: 'submitted' },
      ),
    ).toMatchObject({ status: 'approved' });
    const s = await submittedPlan();
    expect(
      await rejectPlan(
        { db: t.db, actor: bob },
        { planId: s.planId, itemsHash: s.itemsHash, seenStatus: 'submitted', reason: 'no' },
      ),
    ).toMatchObject({ status: 'rejected' });
  });

  it('Z8: a replay request on a set that moved since the preview is stale (who changed it, the new hash); on the new hash it is made', async () => {
    const c = await makeCampaign(t.db, { failed: 2, done: 1 });
    const preview = await summarizeSet(t.db, c.runId);
    expect(preview.eligible).toBe(2);
    const failed = c.targets.find((x) => x.state === 'failed')!;
    await revokeEffect({ db: t.db, actor: carol }, { key: failed.key!, reason: 'known-bad address' });
    const facts = await expectStale(() =>
      requestReplay(
        { db: t.db, actor: alice },
        { runId: c.runId, confirmCount: 2, setHash: preview.setHash, reason: 'crashed run' },
      ),
    );
    expect(facts).toMatchObject({
      subjectType: 'replay',
      was: { hash: preview.setHash },
      now: { state: '1 to send' },
      changedBy: carol.label,
    });
    const made = await requestReplay(
      { db: t.db, actor: alice },
      { runId: c.runId, confirmCount: 1, reason: 'crashed run', ...facts.retry },
    );
    expect(made).toMatchObject({ status: 'awaiting_approval', total: 1 });
  });

  it('A5, Z3: a rejected replay request is audited with what it was decided on: the request, its set, the status seen, who asked when', async () => {
    const c = await makeCampaign(t.db, { failed: 1 });
    const r = await requestReplay(
      { db: t.db, actor: alice },
      { runId: c.runId, confirmCount: 1, reason: 'crashed run' },
    );
    await rejectReplay(
      { db: t.db, actor: bob },
      { approvalRequestId: r.approvalRequestId!, seenStatus: 'open', reason: 'the template is still wrong' },
    );
    const asked = await t.db.approvalRequest.findUniqueOrThrow({ where: { id: r.approvalRequestId! } });
    const entry = await t.db.auditEntry.findFirstOrThrow({ where: { action: 'replay.reject', subjectId: r.replayId } });
    expect(entry).toMatchObject({ actorId: bob.id, runId: c.runId, reason: 'the template is still wrong' });
    expect(entry.detail).toEqual({
      approvalRequestId: r.approvalRequestId,
      setHash: r.setHash,
      seenStatus: 'open',
      requestedById: alice.id,
      requestedAt: asked.requestedAt.toISOString(),
    });
  });

  it('Z8: approving or rejecting a replay request another operator rejected meanwhile is stale; an open one is approved', async () => {
    const c = await makeCampaign(t.db, { failed: 1 });
    const r = await requestReplay(
      { db: t.db, actor: alice },
      { runId: c.runId, confirmCount: 1, reason: 'crashed run' },
    );
    await rejectReplay({ db: t.db, actor: carol }, { approvalRequestId: r.approvalRequestId!, reason: 'wrong run' });
    const seen = { approvalRequestId: r.approvalRequestId!, seenStatus: 'open' as const };
    const facts = await expectStale(() => approveReplay({ db: t.db, actor: bob }, { ...seen, setHash: r.setHash }));
    expect(facts).toMatchObject({ now: { state: 'rejected' }, changedBy: carol.label });
    await expectStale(() => rejectReplay({ db: t.db, actor: bob }, { ...seen, reason: 'no' }));

    const d = await makeCampaign(t.db, { failed: 1 });
    const open = await requestReplay(
      { db: t.db, actor: alice },
      { runId: d.runId, confirmCount: 1, reason: 'crashed run' },
    );
    expect(
      await approveReplay(
        { db: t.db, actor: bob },
        { approvalRequestId: open.approvalRequestId!, setHash: open.setHash, seenStatus: 'open' },
      ),
    ).toMatchObject({ status: 'approved' });
  });
});
