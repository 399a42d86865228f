// Group commit for claims (lib/ledger/claim-batcher.ts): claims made at the same moment share one
// transaction, and each claimer still gets exactly its own answer.
import { describe, expect, it } from 'vitest';
import { sqlPool } from '@/lib/db/client.ts';
import { ClaimBatcher, type ClaimCall } from '@/lib/ledger/claim-batcher.ts';
import { claimEffect, failEffect } from '@/lib/ledger/index.ts';
import type { TargetType } from '@/lib/ledger/normalize.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor, suffix } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 16 });

async function setup() {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  const call = (k: string): ClaimCall => ({
    key: `v1/${run.triggerId}/${tool.name}/notify/${k}/email/${k}%40example.com`,
    tool: tool.name,
    action: 'notify',
    recordId: k,
    target: `${k}@example.com`,
    targetType: 'email',
    triggerId: run.triggerId,
    runId: run.runId,
    actorKind: 'runtime',
    actorId: 'batch-test',
    actorLabel: `claimer ${k}`,
    leaseSeconds: 300,
    request: '{}',
  });
  return { tool, run, call };
}

/** Batches that run one at a time: every claim started in one turn goes in a single transaction. */
const oneBatchAtATime = () => new ClaimBatcher(sqlPool(t.db)!, 1);

describe('claim batches (group commit)', () => {
  it('S1: claims started together share one transaction, and each claimer gets its own key, epoch and attempt', async () => {
    const { call } = await setup();
    const batcher = oneBatchAtATime();
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}-${suffix()}`);
    const results = await Promise.all(keys.map((k) => batcher.claim(call(k))));
    expect(results.every((r) => r.claimed && r.epoch === 1 && r.state === 'pending')).toBe(true);
    expect(new Set(results.map((r) => r.attempt_id)).size).toBe(20);
    // Each answer is the caller's own: its idempotency key is derived from its own effect key.
    const idem = await t.owner<{ key: string; idempotency_key: string; xmin: string }>(
      `SELECT key, idempotency_key, xmin::text FROM effect WHERE key = ANY($1)`,
      [keys.map((k) => call(k).key)],
    );
    const byKey = new Map(idem.rows.map((r) => [r.key, r.idempotency_key]));
    keys.forEach((k, i) => expect(results[i]!.idempotency_key).toBe(byKey.get(call(k).key)));
    expect(new Set(idem.rows.map((r) => r.xmin)).size).toBe(1);
  });

  it('S1: the same key twice in one batch: the first claimer wins, the second is told it skipped', async () => {
    const { call } = await setup();
    const batcher = oneBatchAtATime();
    const k = `dup-${suffix()}`;
    const [first, second] = await Promise.all([
      batcher.claim(call(k)),
      batcher.claim({ ...call(k), actorLabel: 'second claimer' }),
    ]);
    expect(first).toMatchObject({ claimed: true, state: 'pending' });
    expect(second).toMatchObject({ claimed: false, state: 'pending', changed_by: `claimer ${k}` });
    const rows = await t.owner(`SELECT 1 FROM effect WHERE key = $1`, [call(k).key]);
    expect(rows.rowCount).toBe(1);
  });

  it('S1, A1: a fresh key claimed set-wise in a batch writes exactly the rows and audit entry a single claim writes', async () => {
    const { call } = await setup();
    const batcher = oneBatchAtATime();
    const k0 = `alone-${suffix()}`;
    const alone = await batcher.claim(call(k0)); // a batch of one: ledger_claim itself
    const k1 = `batched-${suffix()}`;
    const batched = await Promise.all([batcher.claim(call(k1)), batcher.claim(call(`other-${suffix()}`))]);
    expect(alone.claimed && batched[0]!.claimed).toBe(true);
    const rowsOf = async (key: string) => {
      const q = async (sql: string) =>
        (await t.owner(sql, [key])).rows.map((r) => JSON.parse(JSON.stringify(r).replaceAll(key, 'KEY')));
      return {
        head: await q(
          `SELECT tool, action, target_type, current_epoch, state, changed_by, changed_at = created_at AS same_time FROM effect_key WHERE key = $1`,
        ),
        effect: await q(
          `SELECT epoch, state, idempotency_key = ledger_idempotency_key(key, 1) AS idem_ok, awaiting_claim, changed_by_kind, changed_by, lease_expires_at - changed_at AS lease FROM effect WHERE key = $1`,
        ),
        attempt: await q(
          `SELECT a.epoch, a.response_status, a.effect_id = e.id AS linked FROM attempt a JOIN effect e ON e.key = a.key WHERE a.key = $1`,
        ),
        transition: await q(
          `SELECT t.epoch, t.from_state, t.to_state, t.actor_kind, t.actor_id, t.attempt_id = a.id AS same_attempt FROM effect_transition t JOIN attempt a ON a.key = t.key WHERE t.key = $1`,
        ),
        audit: await q(
          `SELECT chain, seq, actor_kind, actor_id, action, subject_type, subject_id, before_state, after_state, outcome, detail->'epoch' AS epoch, (detail->>'attemptId')::uuid = (SELECT id FROM attempt WHERE key = $1) AS same_attempt FROM audit_entry WHERE subject_id = $1`,
        ),
      };
    };
    const single = await rowsOf(call(k0).key);
    const set = await rowsOf(call(k1).key);
    const relabel = <T extends { changed_by: string }>(rows: T[]) =>
      rows.map((r) => ({ ...r, changed_by: `claimer ${k1}` }));
    expect(single.head[0]).toMatchObject({ changed_by: `claimer ${k0}` });
    expect(set).toEqual({ ...single, head: relabel(single.head), effect: relabel(single.effect) });
    expect(set.audit).toHaveLength(1);
  });

  it('S1, S3: one batch holding fresh keys, a failed key to re-claim and a held key: each gets the answer a lone claim would', async () => {
    const { call } = await setup();
    const batcher = oneBatchAtATime();
    const failed = `failed-${suffix()}`;
    const held = `held-${suffix()}`;
    await batcher.claim(call(failed));
    await batcher.claim(call(held));
    await failEffect(
      { db: t.db, actor: runtimeActor() },
      { key: call(failed).key, epoch: 1, evidence: { status: 550, message: 'mailbox unavailable' } },
    );
    const fresh = [`f1-${suffix()}`, `f2-${suffix()}`];
    const [a, b, c, d] = await Promise.all([
      batcher.claim(call(fresh[0]!)),
      batcher.claim(call(failed)),
      batcher.claim(call(held)),
      batcher.claim(call(fresh[1]!)),
    ]);
    expect(a).toMatchObject({ claimed: true, epoch: 1 });
    expect(b).toMatchObject({ claimed: true, epoch: 1, state: 'pending' });
    expect(c).toMatchObject({ claimed: false, state: 'pending' });
    expect(d).toMatchObject({ claimed: true, epoch: 1 });
  });

  it('S1: a claim the database refuses fails alone; the rest of its batch is claimed once', async () => {
    const { call } = await setup();
    const batcher = oneBatchAtATime();
    const keys = Array.from({ length: 6 }, (_, i) => `iso${i}-${suffix()}`);
    const settled = await Promise.allSettled(
      keys.map((k, i) => batcher.claim(i === 3 ? { ...call(k), targetType: 'carrier-pigeon' as TargetType } : call(k))),
    );
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(String((settled[3] as PromiseRejectedResult).reason)).toMatch(/TargetType|invalid input value/);
    const rows = await t.owner<{ n: string }>(`SELECT count(*) AS n FROM effect WHERE key = ANY($1)`, [
      keys.map((k) => call(k).key),
    ]);
    expect(rows.rows[0]!.n).toBe('5');
  });

  it('S1: batches sharing keys in opposite orders never deadlock; every key has exactly one winner (100 trials)', async () => {
    const { call } = await setup();
    const a = new ClaimBatcher(sqlPool(t.db)!, 1);
    const b = new ClaimBatcher(sqlPool(t.db)!, 1);
    for (let trial = 0; trial < 100; trial++) {
      const keys = Array.from({ length: 8 }, (_, i) => `x${trial}-${i}-${suffix()}`);
      const results = await Promise.all([
        ...keys.map((k) => a.claim(call(k))),
        ...[...keys].reverse().map((k) => b.claim(call(k))),
      ]);
      const winners = results.filter((r) => r.claimed);
      expect(winners).toHaveLength(8);
    }
  });

  it('S1: 50 concurrent claimEffect calls of one key through the shared pool (batched): exactly one winner, 100 trials', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    for (let trial = 0; trial < 100; trial++) {
      const input = {
        runId: run.runId,
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: `c-${trial}`,
        target: `user${trial}@example.com`,
      };
      const results = await Promise.all(
        Array.from({ length: 50 }, () => claimEffect({ db: t.db, actor: runtimeActor() }, input)),
      );
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
    }
  });
});
