// T1: retention prunes the idempotency records, raw provider responses and finished replay items of
// retired runs (event closed, or quiet past the window, nothing pending, unknown or stuck), never a
// key, an effect or the audit trail; a replay of a pruned run's key still refuses to send twice.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import { claimEffect, completeEffect, failEffect, markUnknown } from '@/lib/ledger/index.ts';
import { pruneRetiredRuns } from '@/lib/retention/prune.ts';
import { startRetentionSchedule } from '@/lib/retention/schedule.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor, suffix } from '../helpers/factories.ts';
import { runScript, scriptEnv } from '../helpers/processes.ts';

const t = await createTestDatabase({ poolSize: 10 });
const runtime = runtimeActor();
const policy = { windowDays: 30, batchRuns: 100 };
const systemActor = { kind: 'system', id: 'test', label: 'retention test' } as const;
const tool = (await makeTool(t.db)).name;

/** A run with one key per state, each done key sent with a raw response stored (R1). */
async function runWith(states: ('done' | 'unknown' | 'pending')[]) {
  const { runId } = await makeRun(t.db);
  const keys: string[] = [];
  for (const state of states) {
    const n = suffix();
    const input = { runId, tool, action: 'campaign_welcome', recordId: `c-${n}`, target: `u-${n}@example.com` };
    const claim = await claimEffect({ db: t.db, actor: runtime }, input);
    if (!claim.claimed) throw new Error('fresh key not claimed');
    const ref = { key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId };
    const response = { status: 250, headers: [['x-id', n]] as [string, string][], body: Buffer.from(`ok ${n}`) };
    if (state === 'done') await completeEffect({ db: t.db, actor: runtime }, { ...ref, receipt: `m-${n}`, response });
    if (state === 'unknown') await markUnknown({ db: t.db, actor: runtime }, { key: claim.key, epoch: claim.epoch });
    keys.push(claim.key);
  }
  // A finished replay of the run with one item per key, and idempotency records naming the run and a key.
  const replayId = randomUUID();
  await t.owner(
    `INSERT INTO replay (id, run_id, status, requested_by_id, reason, set_hash, total, finished_at)
     VALUES ($1, $2, 'completed', $3, 'test', 'h', $4, now())`,
    [replayId, runId, randomUUID(), keys.length],
  );
  for (const key of keys)
    await t.owner(
      `INSERT INTO replay_item (replay_id, key, epoch, target, outcome) VALUES ($1, $2, 1, 't', 'skipped')`,
      [replayId, key],
    );
  for (const body of [{ runId }, { claimed: false, key: keys[0] }])
    await t.owner(
      `INSERT INTO idempotency_record (scope, key, request_hash, response_status, response_body, completed_at)
       VALUES ('runtime:test', $1, 'h', 200, $2, now())`,
      [randomUUID(), JSON.stringify(body)],
    );
  // A request still running when the run retired: its record stays (Z5's 409 for a duplicate).
  await t.owner(
    `INSERT INTO idempotency_record (scope, key, request_hash, response_body) VALUES ('runtime:test', $1, 'h', $2)`,
    [randomUUID(), JSON.stringify({ runId })],
  );
  return { runId, keys, input: { runId, tool, action: 'campaign_welcome' } };
}

async function age(runId: string, days: number) {
  await t.owner(`UPDATE run SET updated_at = now() - make_interval(days => $2) WHERE id = $1`, [runId, days]);
  await t.owner(`UPDATE effect_key SET changed_at = now() - make_interval(days => $2) WHERE run_id = $1`, [
    runId,
    days,
  ]);
  await t.owner(`UPDATE effect SET changed_at = now() - make_interval(days => $2) WHERE run_id = $1`, [runId, days]);
  await t.owner(
    `UPDATE replay SET created_at = now() - make_interval(days => $2), finished_at = now() - make_interval(days => $2) WHERE run_id = $1`,
    [runId, days],
  );
}

async function counts(runId: string) {
  const { rows } = await t.owner<Record<string, string>>(
    `SELECT (SELECT count(*) FROM attempt WHERE run_id = $1) AS attempts,
            (SELECT count(*) FROM attempt WHERE run_id = $1 AND response_body IS NOT NULL) AS bodies,
            (SELECT count(*) FROM replay_item i JOIN replay p ON p.id = i.replay_id WHERE p.run_id = $1) AS items,
            (SELECT count(*) FROM replay WHERE run_id = $1) AS replays,
            (SELECT count(*) FROM idempotency_record WHERE response_body->>'runId' = $1::text
               OR response_body->>'key' IN (SELECT key FROM effect_key WHERE run_id = $1)) AS records,
            (SELECT count(*) FROM effect_key WHERE run_id = $1) AS keys,
            (SELECT count(*) FROM effect WHERE run_id = $1) AS effects`,
    [runId],
  );
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
}

describe('T1: retention is tied to the run, never to the key', () => {
  it('T1: prunes a retired run and keeps pending and unknown runs, recent runs, every key and the audit trail', async () => {
    const retired = await runWith(['done', 'done']);
    const withUnknown = await runWith(['done', 'unknown']);
    const withPending = await runWith(['done', 'pending']);
    const recent = await runWith(['done', 'done']);
    for (const r of [retired, withUnknown, withPending]) await age(r.runId, 40);
    await age(recent.runId, 5);
    const before = {
      retired: await counts(retired.runId),
      unknown: await counts(withUnknown.runId),
      pending: await counts(withPending.runId),
      recent: await counts(recent.runId),
    };
    expect(before.retired).toMatchObject({ attempts: 2, bodies: 2, items: 2, records: 3, keys: 2 });
    const auditBefore = await t.owner<{ entry: string }>(`SELECT id::text AS entry FROM audit_entry ORDER BY id`);

    const report = await pruneRetiredRuns(t.db, { actor: systemActor, policy });

    expect(report).toEqual({ batches: 1, runs: 1, idempotencyRecords: 2, rawResponses: 2, replayItems: 2 });
    // Retired: raw bodies, replay items and completed records gone; attempts, keys, effects, the replay row stay.
    expect(await counts(retired.runId)).toEqual({ ...before.retired, bodies: 0, items: 0, records: 1 });
    expect(await counts(withUnknown.runId)).toEqual(before.unknown);
    expect(await counts(withPending.runId)).toEqual(before.pending);
    expect(await counts(recent.runId)).toEqual(before.recent);
    const pruned = await t.owner<{ id: string }>(`SELECT id::text FROM run WHERE pruned_at IS NOT NULL`);
    expect(pruned.rows.map((r) => r.id)).toEqual([retired.runId]);

    // The audit trail: every earlier entry is still there, plus one for the prune with its counts.
    const auditAfter = await t.owner<{ entry: string }>(`SELECT id::text AS entry FROM audit_entry ORDER BY id`);
    expect(auditAfter.rows.slice(0, auditBefore.rows.length)).toEqual(auditBefore.rows);
    expect(auditAfter.rows).toHaveLength(auditBefore.rows.length + 1);
    const entry = await t.db.auditEntry.findFirstOrThrow({ where: { action: 'retention.prune' } });
    expect(entry.detail).toMatchObject({ runs: 1, idempotencyRecords: 2, rawResponses: 2, replayItems: 2 });
    expect((await verifyAuditTrail(t.db)).ok).toBe(true);

    // A replay of the pruned run's key still refuses to send twice: the key never expired.
    const effectsBefore = await t.owner(`SELECT count(*)::int AS n FROM effect`);
    const kept = await t.db.effectKey.findUniqueOrThrow({ where: { key: retired.keys[0]! } });
    const again = await claimEffect(
      { db: t.db, actor: runtime },
      { ...retired.input, recordId: kept.recordId, target: kept.target },
    );
    expect(again).toMatchObject({ claimed: false, key: retired.keys[0], state: 'done' });
    expect((await t.owner(`SELECT count(*)::int AS n FROM effect`)).rows).toEqual(effectsBefore.rows);

    // A second pass finds nothing and writes nothing.
    const second = await pruneRetiredRuns(t.db, { actor: systemActor, policy });
    expect(second.runs).toBe(0);
    expect((await t.owner(`SELECT count(*)::int AS n FROM audit_entry`)).rows[0]!.n).toBe(auditAfter.rows.length);
  });

  it('T1: a run replayed after its event closed long ago is kept for the window after the replay, and a run holding an unknown key it claimed again is kept', async () => {
    const replayedLate = await runWith(['done']);
    await age(replayedLate.runId, 40);
    // The event closed long ago; the run's replay finished just now.
    await t.owner(
      `UPDATE event SET closed_at = now() - interval '60 days' WHERE id = (SELECT event_id FROM run WHERE id = $1)`,
      [replayedLate.runId],
    );
    await t.owner(`UPDATE replay SET finished_at = now() WHERE run_id = $1`, [replayedLate.runId]);

    // A second run of the same event claims again a key the first run's send failed, and that attempt
    // ends unknown: the second run holds the key's current epoch, which is in doubt.
    const workflow = `wf_${suffix()}`;
    const trigger = `evt_${suffix()}`;
    const firstRun = await makeRun(t.db, workflow, trigger);
    const holder = await makeRun(t.db, workflow, trigger);
    const intent = { tool, action: 'campaign_welcome', recordId: 'c-held', target: `held-${suffix()}@example.com` };
    const a = await claimEffect({ db: t.db, actor: runtime }, { runId: firstRun.runId, ...intent });
    if (!a.claimed) throw new Error('first claim lost');
    await failEffect(
      { db: t.db, actor: runtime },
      { key: a.key, epoch: a.epoch, attemptId: a.attemptId, evidence: {} },
    );
    const b = await claimEffect({ db: t.db, actor: runtime }, { runId: holder.runId, ...intent });
    if (!b.claimed) throw new Error('second claim lost');
    await markUnknown({ db: t.db, actor: runtime }, { key: b.key, epoch: b.epoch, attemptId: b.attemptId });
    await age(firstRun.runId, 40);
    await age(holder.runId, 40);

    await pruneRetiredRuns(t.db, { actor: systemActor, policy });
    const pruned = await t.owner<{ id: string }>(
      `SELECT id::text FROM run WHERE pruned_at IS NOT NULL AND id = ANY($1)`,
      [[replayedLate.runId, holder.runId]],
    );
    expect(pruned.rows).toEqual([]);
  });

  it('T1: npm run prune prunes batch by batch with a progress line and an audit entry per batch', async () => {
    const a = await runWith(['done']);
    const b = await runWith(['done']);
    await age(a.runId, 60);
    await age(b.runId, 60);
    const result = await runScript(
      'scripts/prune.ts',
      scriptEnv({ DATABASE_URL: t.appUrl, RETENTION_BATCH_RUNS: '1', RETENTION_WINDOW_DAYS: '30', NODE_ENV: 'test' }),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/batch 1: 1 runs so far/);
    expect(result.stdout).toMatch(/batch 2: 2 runs so far/);
    expect(result.stdout).toMatch(
      /done: 2 runs in 2 batches; 4 idempotency records, 2 raw responses, 2 replay items pruned/,
    );
    expect(await counts(a.runId)).toMatchObject({ bodies: 0, items: 0, records: 1, keys: 1, effects: 1 });
    expect(await counts(b.runId)).toMatchObject({ bodies: 0, items: 0, records: 1, keys: 1, effects: 1 });
    const entries = await t.db.auditEntry.count({ where: { action: 'retention.prune', actorId: 'prune-cli' } });
    expect(entries).toBe(2);
  });

  it('T1: the scheduled prune runs only in the worker that leads', async () => {
    const run = await runWith(['done']);
    await age(run.runId, 60);
    const isPruned = async () =>
      (await t.owner(`SELECT 1 FROM run WHERE id = $1 AND pruned_at IS NOT NULL`, [run.runId])).rowCount === 1;
    let followerAsked = 0;
    const follower = startRetentionSchedule({
      db: t.db,
      isLeader: () => {
        followerAsked += 1; // a follower is asked on every tick and declines
        return false;
      },
      intervalMs: 20,
      policy,
      log: () => undefined,
    });
    await expect.poll(() => followerAsked, { timeout: 60_000 }).toBeGreaterThanOrEqual(3);
    await follower.stop();
    expect(await isPruned()).toBe(false);
    const leader = startRetentionSchedule({
      db: t.db,
      isLeader: () => true,
      intervalMs: 20,
      policy,
      log: () => undefined,
    });
    await expect.poll(isPruned, { timeout: 60_000 }).toBe(true);
    await leader.stop();
    const entry = await t.db.auditEntry.findFirstOrThrow({
      where: { action: 'retention.prune', actorId: 'retention' },
    });
    expect(entry).toMatchObject({ actorKind: 'policy', chain: 'retention' });
    expect(entry.detail).toMatchObject({ runs: 1, rawResponses: 1 });
  });
});
