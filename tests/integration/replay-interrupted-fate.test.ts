// C1 + R2 + S4: the leading worker is killed (SIGKILL) half-way through a forced replay of 1,000
// targets through the sandbox provider, while a second worker runs beside it. The sends it had in
// flight are learned from the provider (lookup by idempotency key, then a re-send with the same key
// inside the provider's idempotency window), so no item is left for a person: every target is
// delivered exactly once, every key ends done, and no replay item stays interrupted or unknown.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { getReplayProgress, installJobEngine, requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { makeCampaign, until } from './replay-fixtures.ts';

const TARGETS = 1000;
const root = path.resolve(import.meta.dirname, '../..');

let sandbox: Sandbox | undefined;
let sender: PgBoss | undefined;
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await sender?.stop({ graceful: false });
  await sandbox?.stop();
});

function spawnWorker(appUrl: string, url: string): { child: ChildProcess; output: () => string } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.MIGRATION_DATABASE_URL;
  Object.assign(env, {
    DATABASE_URL: appUrl,
    NODE_ENV: 'test',
    REPLAY_CONCURRENCY: '4',
    RECONCILE_INTERVAL_SECONDS: '1',
    LEDGER_PROVIDERS: JSON.stringify({ sandbox: { type: 'sandbox', url } }),
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/worker.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.resume();
  children.add(child);
  child.once('exit', () => children.delete(child));
  return { child, output: () => text };
}

const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

describe('interrupted sends learned from the provider', () => {
  it(
    `F5 C1 R2 S4: the leading worker killed half-way through a replay of ${TARGETS} targets: no item left for a person, each target delivered exactly once`,
    { timeout: 300_000 },
    async () => {
      const t = await createTestDatabase({ poolSize: 20 });
      await installJobEngine(t.ownerUrl);
      // Each send takes 20 ms at the provider, as a real one does, so the kill finds sends in flight:
      // some reach the provider and are delivered after the worker is gone, others never arrive.
      sandbox = await startSandbox({ latencyMs: 20 });
      sender = await startBoss(t.appUrl);
      // A long lease and settle window: the kill's sends are to be settled by the second worker's handler,
      // not become unknown by waiting out a window.
      const c = await makeCampaign(
        t.db,
        { not_sent: TARGETS },
        { provider: 'sandbox', leaseSeconds: 120, settleWindowSeconds: 120, fourEyesReplay: false },
      );
      const operator = userActor('operator');
      const req = await requestReplay(
        { db: t.db, actor: operator },
        { runId: c.runId, confirmCount: TARGETS, reason: 'crashed campaign' },
      );

      const leader = spawnWorker(t.appUrl, sandbox.url);
      await until('the first worker to lead', async () => leader.output().includes('leadership acquired'), 60_000, 20);
      const second = spawnWorker(t.appUrl, sandbox.url);
      await startReplay(
        { db: t.db, actor: operator, jobs: sender },
        { replayId: req.replayId, seenStatus: 'approved' },
      );
      await until(
        'half of the targets to be delivered',
        async () => sandbox!.deliveries.length >= TARGETS / 2,
        120_000,
        2,
      );
      leader.child.kill('SIGKILL');
      const killedAt = Date.now();
      await exited(leader.child);

      // The items the dead leader held: claimed by this replay, no outcome, the key still pending.
      const held = await t.owner<{ id: string }>(
        `SELECT ri.id::text AS id FROM replay_item ri JOIN effect e ON e.key = ri.key AND e.epoch = ri.epoch
          WHERE ri.replay_id = $1 AND ri.outcome IS NULL AND e.state = 'pending' AND NOT e.awaiting_claim`,
        [req.replayId],
      );
      const heldIds = held.rows.map((r) => r.id);
      const unsettled = async () =>
        Number(
          (
            await t.owner<{ n: string }>(
              `SELECT count(*) AS n FROM replay_item WHERE id = ANY($1::bigint[]) AND (outcome IS NULL OR outcome = 'interrupted')`,
              [heldIds],
            )
          ).rows[0]!.n,
        );
      await until('the dead leader’s sends to be settled', async () => (await unsettled()) === 0, 120_000, 20);
      const settleMs = Date.now() - killedAt;

      await until(
        'the replay to complete',
        async () => (await getReplayProgress({ db: t.db }, { replayId: req.replayId })).status === 'completed',
        120_000,
        100,
      );
      second.child.kill('SIGTERM');
      await exited(second.child);

      // Exactly once: every target got one message.
      const perTarget = new Map<string, number>();
      for (const d of sandbox.deliveries) perTarget.set(d.to, (perTarget.get(d.to) ?? 0) + 1);
      expect(perTarget.size).toBe(TARGETS);
      expect([...perTarget.values()].filter((n) => n !== 1)).toEqual([]);
      // Nothing for a person: every key done, no item unknown or interrupted.
      const states = await t.owner<{ state: string; n: string }>(
        `SELECT k.state::text AS state, count(*) AS n FROM plan_item pi JOIN effect_key k ON k.key = pi.key
          WHERE pi.run_id = $1 GROUP BY k.state`,
        [c.runId],
      );
      expect(states.rows.map((r) => [r.state, Number(r.n)])).toEqual([['done', TARGETS]]);
      const outcomes = await t.owner<{ outcome: string; n: string }>(
        `SELECT outcome, count(*) AS n FROM replay_item WHERE replay_id = $1 GROUP BY outcome`,
        [req.replayId],
      );
      expect(outcomes.rows.map((r) => [r.outcome, Number(r.n)])).toEqual([['sent', TARGETS]]);
      const p = await getReplayProgress({ db: t.db }, { replayId: req.replayId });
      expect(p).toMatchObject({ sent: TARGETS, unknown: 0, failed: 0, skipped: 0 });
      // The kill left sends in flight, and the provider told their fate: found by key, or re-sent.
      expect(heldIds.length).toBeGreaterThan(0);
      const learned = await t.owner<{ note: string }>(`SELECT note FROM replay_item WHERE id = ANY($1::bigint[])`, [
        heldIds,
      ]);
      const found = learned.rows.filter((r) => r.note.includes('found by idempotency key')).length;
      console.log(
        `interrupted fate: ${heldIds.length} sends in flight at the kill, settled in ${settleMs} ms after it ` +
          `(${((heldIds.length * 1000) / settleMs).toFixed(1)} items/s): ${found} found delivered by their idempotency key, ` +
          `${heldIds.length - found} re-sent with the same key; ${sandbox.deliveries.length} deliveries, ${sandbox.requests()} sends`,
      );
    },
  );
});
