// Issue 17: what /metrics says about the work behind the API, scraped after doing it: provider calls
// by provider and result with their latency, replay items by outcome (the throughput), the progress
// of running replays (reported only where the reporter says so: the worker leader), and error
// answers of the agent API by route. Real worker code in process, the real sandbox provider, a real
// database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { GET as metricsGET } from '@/app/metrics/route.ts';
import { setDb } from '@/lib/api/db.ts';
import { watchReplays } from '@/lib/ops/work-metrics.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import '@/lib/providers/sandbox/register.ts';
import {
  getReplayProgress,
  installJobEngine,
  requestReplay,
  startBoss,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, userActor } from '../helpers/factories.ts';
import { makeKey, post, useApiDb } from './api-support.ts';
import { makeCampaign, until } from './replay-fixtures.ts';

let t: TestDatabase;
let sandbox: Sandbox;
let sender: PgBoss;
let worker: ReplayWorker | undefined;
let leading = true;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 20 });
  useApiDb(t.db);
  await installJobEngine(t.ownerUrl);
  sandbox = await startSandbox({ holdMs: 3_000 });
  sender = await startBoss(t.appUrl);
  watchReplays(t.db, () => leading);
});
afterAll(async () => {
  setDb(undefined);
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await sandbox?.stop();
});

const scrape = async () => (await metricsGET(new Request('http://x/metrics'))).text();
/** A sample's value in the exposition text (0 when the series does not exist yet). */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('metrics of replays and provider calls', () => {
  it('progress of a running replay, then provider calls by result with latency and items by outcome', async () => {
    const operator = userActor('operator');
    const c = await makeCampaign(t.db, { not_sent: 6 }, { provider: 'sandbox', fourEyesReplay: false });
    // One send is accepted and never answered: an ambiguous call, left pending for the reconciler.
    sandbox.failNext('timeout_after_accept', { to: c.targets[0]!.target });
    const r = await requestReplay(
      { db: t.db, actor: operator },
      { runId: c.runId, confirmCount: 6, reason: 'metrics' },
    );
    await startReplay({ db: t.db, actor: operator, jobs: sender }, { replayId: r.replayId });

    // Running, no worker yet: six items remain.
    const waiting = await scrape();
    expect(sample(waiting, 'ledger_replay_progress_items{state="remaining"}')).toBe(6);
    expect(sample(waiting, 'ledger_replay_progress_items{state="sent"}')).toBe(0);
    // A process that does not lead reports no progress at all (the leader's figure is the only one).
    leading = false;
    expect(await scrape()).not.toMatch(/^ledger_replay_progress_items\{/m);
    leading = true;

    const before = await scrape();
    worker = await startReplayWorker({
      appUrl: t.appUrl,
      db: t.db,
      providers: new ProviderRegistry({ sandbox: { type: 'sandbox', url: sandbox.url, sendTimeoutSeconds: 1 } }),
      concurrency: 1,
      reconcileIntervalMs: 600_000,
    });
    await until(
      'replay to complete',
      async () => (await getReplayProgress({ db: t.db }, { replayId: r.replayId })).status === 'completed',
      120_000,
    );
    const after = await scrape();
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect(delta('ledger_provider_calls_total{provider="sandbox",result="answered"}')).toBe(5);
    expect(delta('ledger_provider_calls_total{provider="sandbox",result="ambiguous"}')).toBe(1);
    expect(delta('ledger_provider_call_duration_seconds_count{provider="sandbox",result="answered"}')).toBe(5);
    // The ambiguous call waited for the 1 s send timeout: its latency is in the 1 s..2.5 s buckets.
    expect(delta('ledger_provider_call_duration_seconds_bucket{le="0.5",provider="sandbox",result="ambiguous"}')).toBe(
      0,
    );
    expect(delta('ledger_provider_call_duration_seconds_bucket{le="30",provider="sandbox",result="ambiguous"}')).toBe(
      1,
    );
    expect(delta('ledger_replay_items_total{outcome="sent"}')).toBe(5);
    expect(delta('ledger_replay_items_total{outcome="unknown"}')).toBe(1);
    // Completed: no running replay is left, so nothing remains.
    expect(sample(after, 'ledger_replay_progress_items{state="remaining"}')).toBe(0);
    expect(sandbox.deliveries.length).toBe(6);
  });

  it('error answers of the agent API by route and status', async () => {
    const token = (await makeKey(t.db)).token;
    const tool = (await makeTool(t.db)).name;
    const run = await makeRun(t.db);
    const before = await scrape();
    const body = { runId: run.runId, tool, action: 'campaign_welcome', recordId: 'r-1', target: 'not an address' };
    expect((await post('/effects/claim', body, { token })).status).toBe(422);
    expect((await post('/effects/claim', body, { token })).status).toBe(422);
    expect(
      (await post('/runs', { workflow: 'wf', triggerId: 'e-1' }, { token: 'elk_bad_xxxxxxxxxxxxxxxx' })).status,
    ).toBe(401);
    const after = await scrape();
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect(delta('ledger_api_errors_total{operation="effect.claim",status="422"}')).toBe(2);
    expect(delta('ledger_api_errors_total{operation="run.create",status="401"}')).toBe(1);
    expect(after).toMatch(/^ledger_db_pool_waiting \d+$/m);
  });
});
