// The forced replay against the sandbox provider (the agent API's real HTTP provider): sends counted
// at the sandbox, and each of its failure modes landing in the right state with the raw response kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { startSandbox, type FailureMode, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import '@/lib/providers/sandbox/register.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import {
  getReplayProgress,
  getReplayReport,
  installJobEngine,
  requestReplay,
  startBoss,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { makeCampaign, until } from './replay-fixtures.ts';

let t: TestDatabase;
let sandbox: Sandbox;
let worker: ReplayWorker;
let sender: PgBoss;
let providers: ProviderRegistry;
const operator = userActor('operator');

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 30 });
  await installJobEngine(t.ownerUrl);
  sandbox = await startSandbox({ holdMs: 5_000 });
  providers = new ProviderRegistry({ sandbox: { type: 'sandbox', url: sandbox.url, sendTimeoutSeconds: 1 } });
  worker = await startReplayWorker({
    appUrl: t.appUrl,
    db: t.db,
    providers,
    concurrency: 2,
    reconcileIntervalMs: 600_000,
  });
  sender = await startBoss(t.appUrl);
});
afterAll(async () => {
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await sandbox?.stop();
});

async function replay(runId: string, count: number) {
  const r = await requestReplay(
    { db: t.db, actor: operator },
    { runId, confirmCount: count, reason: 'replay against the sandbox' },
  );
  await startReplay({ db: t.db, actor: operator, jobs: sender }, { replayId: r.replayId });
  await until(
    'replay to complete',
    async () => (await getReplayProgress({ db: t.db }, { replayId: r.replayId })).status === 'completed',
    60_000,
  );
  return getReplayReport({ db: t.db }, { replayId: r.replayId, limit: 1000 });
}

describe('forced replay against the sandbox', () => {
  it('F2: sends exactly to the not-sent, failed and awaiting targets, counted at the sandbox; nothing to done, revoked, unknown, stuck', async () => {
    const c = await makeCampaign(
      t.db,
      { not_sent: 8, failed: 4, awaiting_claim: 2, done: 3, revoked: 2, unknown: 2, stuck: 2, in_flight: 2 },
      { provider: 'sandbox', fourEyesReplay: false },
    );
    const report = await replay(c.runId, 14);
    expect(report).toMatchObject({ total: 14, sent: 14, skipped: 0, failed: 0, unknown: 0 });
    for (const x of c.targets) {
      const expected = ['not_sent', 'failed', 'awaiting_claim'].includes(x.state) ? 1 : 0;
      expect(sandbox.deliveriesTo(x.target).length, `${x.state} ${x.target}`).toBe(expected);
    }
  });

  it('S3 S4 S6 R1 R3: each sandbox failure mode lands in the right state, with the raw response kept', async () => {
    const modes: FailureMode[] = [
      'reject',
      'server_error',
      'server_error_after_send',
      'timeout_after_accept',
      'accept_then_fail',
      'already_existed_failed',
      'completion_token',
    ];
    const c = await makeCampaign(t.db, { not_sent: modes.length }, { provider: 'sandbox', fourEyesReplay: false });
    modes.forEach((mode, i) => sandbox.failNext(mode, { to: c.targets[i]!.target }));
    const report = await replay(c.runId, modes.length);
    const byTarget = new Map(report.items.map((i) => [i.target, i]));
    const expected: Record<FailureMode, { outcome: string; state: string; rawStatus: number | null }> = {
      reject: { outcome: 'failed', state: 'failed', rawStatus: 422 },
      server_error: { outcome: 'unknown', state: 'pending', rawStatus: 500 },
      server_error_after_send: { outcome: 'unknown', state: 'pending', rawStatus: 502 },
      timeout_after_accept: { outcome: 'unknown', state: 'pending', rawStatus: null },
      accept_then_fail: { outcome: 'sent', state: 'done', rawStatus: 201 },
      already_existed_failed: { outcome: 'failed', state: 'stuck', rawStatus: 200 },
      completion_token: { outcome: 'failed', state: 'stuck', rawStatus: 201 },
    };
    for (const [i, mode] of modes.entries()) {
      const x = c.targets[i]!;
      const item = byTarget.get(x.target)!;
      const row = (
        await t.owner<{ state: string; status: number | null; body: Buffer | null }>(
          `SELECT e.state::text AS state, a.response_status AS status, a.response_body AS body FROM effect e JOIN attempt a ON a.key = e.key AND a.epoch = e.epoch WHERE e.key = $1 ORDER BY a.started_at DESC LIMIT 1`,
          [item.key],
        )
      ).rows[0]!;
      expect({ mode, outcome: item.outcome, state: row.state, rawStatus: row.status }).toEqual({
        mode,
        ...expected[mode],
      });
      if (row.status !== null) expect(row.body!.length).toBeGreaterThan(0); // R1: body bytes as received
    }
  });
});
