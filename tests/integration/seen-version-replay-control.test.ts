// Z8 for a running replay's controls: start, pause, resume and cancel carry the replay's status as the
// page showed it. A replay another operator paused, resumed or cancelled meanwhile is a stale decision:
// nothing is written, and the refusal names the status now, who moved it and when.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { snapshot, suffix } from '../helpers/factories.ts';
import { makeCampaign } from './replay-fixtures.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { StaleDecision, type Actor } from '@/lib/ledger/index.ts';
import { cancelReplay, pauseReplay, requestReplay, resumeReplay, startReplay } from '@/lib/replay/index.ts';

const t = await createTestDatabase({ poolSize: 6 });
const system: Actor = { kind: 'system', id: 'test', label: 'test setup' };
const noJobs = { insert: async () => undefined };

async function operator(): Promise<Actor & { kind: 'user' }> {
  const email = `op-${suffix()}@example.com`;
  const u = await insertUser(t.db, { email, name: 'Op', role: 'operator', password: 'a-long-enough-password' }, system);
  return { kind: 'user', id: u.id, label: email, role: 'operator' };
}
const [alice, bob] = [await operator(), await operator()];
const as = (actor: Actor) => ({ db: t.db, actor, jobs: noJobs });

async function runningReplay() {
  const c = await makeCampaign(t.db, { failed: 2 }, { fourEyesReplay: false });
  const r = await requestReplay(as(alice), { runId: c.runId, confirmCount: 2, reason: 'crashed run' });
  await startReplay(as(alice), { replayId: r.replayId, seenStatus: 'approved' });
  return r.replayId;
}

async function expectStale(decide: () => Promise<unknown>) {
  const before = await snapshot(t.db);
  const entries = await t.db.auditEntry.count();
  const error = await decide().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StaleDecision);
  expect(await snapshot(t.db)).toEqual(before);
  expect(await t.db.auditEntry.count()).toBe(entries);
  return (error as StaleDecision).stale;
}

describe('Z8: replay controls carry the status the person saw', () => {
  it('Z8: pausing a replay a colleague paused meanwhile is stale, naming who; resuming on the new status works', async () => {
    const replayId = await runningReplay();
    await pauseReplay(as(bob), { replayId, seenStatus: 'running' });
    const facts = await expectStale(() => pauseReplay(as(alice), { replayId, seenStatus: 'running' }));
    expect(facts).toMatchObject({
      subjectType: 'replay',
      was: { state: 'running' },
      now: { state: 'paused' },
      changedBy: bob.label,
      retry: {},
    });
    expect(facts.changedAt).not.toBeNull();
    // A cancel on the old status is stale too, and offers the status to decide again on.
    const cancel = await expectStale(() =>
      cancelReplay(as(alice), { replayId, seenStatus: 'running', reason: 'wrong template' }),
    );
    expect(cancel.retry).toEqual({ seenStatus: 'paused' });
    expect(await resumeReplay(as(alice), { replayId, seenStatus: 'paused' })).toMatchObject({ status: 'running' });
  });

  it('Z8: starting a replay a colleague cancelled meanwhile is stale and starts nothing', async () => {
    const c = await makeCampaign(t.db, { failed: 1 }, { fourEyesReplay: false });
    const r = await requestReplay(as(alice), { runId: c.runId, confirmCount: 1, reason: 'crashed run' });
    await cancelReplay(as(bob), { replayId: r.replayId, seenStatus: 'approved', reason: 'not today' });
    const facts = await expectStale(() => startReplay(as(alice), { replayId: r.replayId, seenStatus: 'approved' }));
    expect(facts).toMatchObject({ now: { state: 'cancelled' }, changedBy: bob.label, retry: {} });
    expect((await t.db.replay.findUniqueOrThrow({ where: { id: r.replayId } })).status).toBe('cancelled');
  });
});
