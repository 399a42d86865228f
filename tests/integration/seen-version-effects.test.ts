// Z8: an effect decision carries the version the person was shown (epoch, state, changed-at). If the
// effect moved meanwhile, the decision writes nothing (no transition, no audit entry) and is refused
// with a StaleDecision naming the new state, who changed it and when; on the version it reports, the
// same decision goes through.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeTool, snapshot, userActor } from '../helpers/factories.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import {
  completeEffect,
  resolveUnknown,
  revokeEffect,
  seenEffect,
  StaleDecision,
  type SeenEffectVersion,
} from '@/lib/ledger/index.ts';

const t = await createTestDatabase({ poolSize: 6 });
const operator = userActor('operator');
const support = userActor('support');

/** The version a page shows: read from effect_key as the pages read it. */
async function seenNow(key: string): Promise<SeenEffectVersion> {
  const k = await t.db.effectKey.findUniqueOrThrow({ where: { key } });
  return seenEffect({ epoch: k.currentEpoch, state: k.state, changedAt: k.changedAt });
}

/** Runs a decision that must be refused as stale, and proves nothing was written. */
async function expectStale(decide: () => Promise<unknown>) {
  const before = await snapshot(t.db);
  const error = await decide().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StaleDecision);
  expect(await snapshot(t.db)).toEqual(before);
  return (error as StaleDecision).stale;
}

describe('Z8: effect decisions on the version the person saw', () => {
  it('Z8: revoke of a pending effect that the runtime completed meanwhile is stale; on the new version it revokes', async () => {
    const e = await makeEffect(t.db, 'pending', {
      runtime: { kind: 'runtime', id: 'rk', label: 'run-42', workflows: ['*'] },
    });
    const seen = await seenNow(e.key);
    await completeEffect({ db: t.db, actor: e.runtime }, { key: e.key, receipt: 'msg-1' });
    const facts = await expectStale(() =>
      revokeEffect({ db: t.db, actor: operator }, { key: e.key, reason: 'withdraw', seen }),
    );
    expect(facts).toMatchObject({
      subjectType: 'effect',
      subjectId: e.key,
      was: { state: 'pending', epoch: 1 },
      now: { state: 'done', epoch: 1 },
      changedBy: 'run-42',
    });
    expect(new Date(facts.changedAt!).getTime()).toBe(
      (await t.db.effectKey.findUniqueOrThrow({ where: { key: e.key } })).changedAt.getTime(),
    );
    const revoked = await revokeEffect(
      { db: t.db, actor: operator },
      { key: e.key, reason: 'withdraw', ...facts.retry },
    );
    expect(revoked).toMatchObject({ from: 'done', state: 'revoked' });
    const ok = await t.owner(
      `SELECT count(*)::int AS n FROM audit_entry WHERE subject_id = $1 AND action = 'effect.revoke' AND outcome = 'ok'`,
      [e.key],
    );
    expect(ok.rows[0]?.n).toBe(1);
  });

  it('Z8: a change that ends in the same state and epoch is still a change: changed-at tells them apart', async () => {
    const e = await makeEffect(t.db, 'done');
    const seen = await seenNow(e.key);
    // A change that leaves the same state and epoch (the clock moved on the head) is still a change.
    await t.owner(`UPDATE effect_key SET changed_at = changed_at + interval '1 second' WHERE key = $1`, [e.key]);
    const facts = await expectStale(() =>
      revokeEffect({ db: t.db, actor: operator }, { key: e.key, reason: 'x', seen }),
    );
    expect(facts.now.state).toBe('done');
    expect(facts.was.state).toBe('done');
  });

  it('Z8: revoke on the current version writes the transition and its audit entry', async () => {
    const e = await makeEffect(t.db, 'failed');
    const r = await revokeEffect(
      { db: t.db, actor: operator },
      { key: e.key, reason: 'known-bad address', seen: await seenNow(e.key) },
    );
    expect(r).toMatchObject({ from: 'failed', state: 'revoked' });
  });

  it('Z8: a planned target revoked as never sent is stale once a claim created its effect', async () => {
    const e = await makeEffect(t.db, 'pending');
    const facts = await expectStale(() =>
      revokeEffect(
        { db: t.db, actor: operator },
        { key: e.key, reason: 'exclude', seen: { epoch: 1, state: 'none', changedAt: null } },
      ),
    );
    expect(facts.now).toMatchObject({ state: 'pending', epoch: 1 });
  });

  it('Z8: resolve (sent and not sent) of an unknown that another person resolved meanwhile is stale; current version resolves', async () => {
    const e = await makeEffect(t.db, 'unknown');
    const seen = await seenNow(e.key);
    await resolveUnknown(
      { db: t.db, actor: userActor('support') },
      { key: e.key, outcome: 'not_sent', reason: 'no such message' },
    );
    const facts = await expectStale(() =>
      resolveUnknown(
        { db: t.db, actor: support },
        { key: e.key, outcome: 'sent', receipt: 'msg-9', reason: 'provider log', seen },
      ),
    );
    expect(facts).toMatchObject({ was: { state: 'unknown' }, now: { state: 'pending' } });
    await expectStale(() =>
      resolveUnknown({ db: t.db, actor: support }, { key: e.key, outcome: 'not_sent', reason: 'again', seen }),
    );

    const f = await makeEffect(t.db, 'unknown');
    const current = await seenNow(f.key);
    const done = await resolveUnknown(
      { db: t.db, actor: support },
      { key: f.key, outcome: 'sent', receipt: 'msg-10', reason: 'provider log', seen: current },
    );
    expect(done).toMatchObject({ from: 'unknown', state: 'done' });
    const g = await makeEffect(t.db, 'unknown');
    expect(
      await resolveUnknown(
        { db: t.db, actor: support },
        { key: g.key, outcome: 'not_sent', reason: 'none', seen: await seenNow(g.key) },
      ),
    ).toMatchObject({ state: 'pending' });
  });

  it('Z8: a bump request (four-eyes and direct) on a key revoked meanwhile is stale; on the current version it is made', async () => {
    const e = await makeEffect(t.db, 'done');
    const seen = await seenNow(e.key);
    await revokeEffect({ db: t.db, actor: userActor('operator') }, { key: e.key, reason: 'withdrawn' });
    const before = await t.db.approvalRequest.count();
    const facts = await expectStale(() =>
      requestBump({ db: t.db, actor: operator }, { keys: [e.key], reason: 'resend', seen: { [e.key]: seen } }),
    );
    expect(facts.now.state).toBe('revoked');
    expect(await t.db.approvalRequest.count()).toBe(before);
    const r = await requestBump(
      { db: t.db, actor: operator },
      { keys: [e.key], reason: 'resend', seen: { [e.key]: facts.retry.seen as SeenEffectVersion } },
    );
    expect(r).toMatchObject({ mode: 'requested', count: 1 });

    const tool = await makeTool(t.db);
    await t.db.toolDefinition.update({ where: { name: tool.name }, data: { fourEyesBump: false } });
    const d = await makeEffect(t.db, 'done', { tool: tool.name });
    const dSeen = await seenNow(d.key);
    await revokeEffect({ db: t.db, actor: userActor('operator') }, { key: d.key, reason: 'withdrawn' });
    await expectStale(() =>
      requestBump({ db: t.db, actor: operator }, { keys: [d.key], reason: 'resend', seen: { [d.key]: dSeen } }),
    );
    expect(
      await requestBump(
        { db: t.db, actor: operator },
        { keys: [d.key], reason: 'resend', seen: { [d.key]: await seenNow(d.key) } },
      ),
    ).toMatchObject({ mode: 'executed', bumped: 1 });
  });
});
