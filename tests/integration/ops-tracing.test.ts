// Issue 17: OpenTelemetry traces, exported to a real in-memory exporter of the SDK: an agent API
// request is one span carrying its request id, with the ledger command's span as its child; a replay
// chunk is one span with each item's claim and provider send as children. With tracing off nothing is
// recorded and traced() runs its function without a span.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { setDb } from '@/lib/api/db.ts';
import { startTracing, traced, tracingOn, type Tracing } from '@/lib/ops/tracing.ts';
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
let exporter: InMemorySpanExporter;
let tracing: Tracing | undefined;
let sandbox: Sandbox;
let sender: PgBoss;
let worker: ReplayWorker | undefined;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 20 });
  useApiDb(t.db);
  await installJobEngine(t.ownerUrl);
  sandbox = await startSandbox();
  sender = await startBoss(t.appUrl);
  exporter = new InMemorySpanExporter();
  tracing = startTracing('ledger-test', exporter);
});
afterAll(async () => {
  setDb(undefined);
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await sandbox?.stop();
  await tracing?.shutdown();
});

const spans = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const childrenOf = (parent: ReadableSpan, name: string) =>
  spans(name).filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);

describe('OpenTelemetry traces', () => {
  it('an agent API claim and outcome: request spans with the request id, ledger command spans as children', async () => {
    expect(tracingOn()).toBe(true);
    const token = (await makeKey(t.db)).token;
    const tool = (await makeTool(t.db)).name;
    const run = await makeRun(t.db);
    exporter.reset();
    const body = { runId: run.runId, tool, action: 'campaign_welcome', recordId: 'r-1', target: 'trace@example.com' };
    const won = await post('/effects/claim', body, { token, headers: { 'x-request-id': 'req-trace-claim' } });
    expect(won.status).toBe(201);
    const claim = (await won.json()) as { key: string; epoch: number; attemptId: string };
    const done = await post(
      '/effects/outcome',
      { key: claim.key, epoch: claim.epoch, outcome: 'done', receipt: 'msg-trace-1', attemptId: claim.attemptId },
      { token, headers: { 'x-request-id': 'req-trace-outcome' } },
    );
    expect(done.status).toBe(200);

    const [api] = spans('api effect.claim');
    expect(api).toBeDefined();
    expect(api!.parentSpanContext).toBeUndefined(); // the root of its trace
    expect(api!.attributes).toMatchObject({
      'ledger.request_id': 'req-trace-claim',
      'http.request.method': 'POST',
      'url.path': '/api/v1/effects/claim',
      'http.response.status_code': 201,
    });
    expect(String(api!.attributes['ledger.actor'])).toMatch(/^runtime:/);
    const [ledgerClaim] = childrenOf(api!, 'ledger.claim');
    expect(ledgerClaim?.spanContext().traceId).toBe(api!.spanContext().traceId);
    expect(ledgerClaim!.attributes).toMatchObject({
      'ledger.key': claim.key,
      'ledger.epoch': 1,
      'ledger.claimed': true,
      'ledger.request_id': 'req-trace-claim',
      'ledger.actor': 'runtime',
    });

    const [report] = spans('api effect.report');
    expect(report!.attributes).toMatchObject({
      'ledger.request_id': 'req-trace-outcome',
      'http.response.status_code': 200,
    });
    const [transition] = childrenOf(report!, 'ledger.transition');
    expect(transition!.attributes).toMatchObject({
      'ledger.key': claim.key,
      'ledger.to': 'done',
      'ledger.from': 'pending',
      'ledger.state': 'done',
      'ledger.request_id': 'req-trace-outcome',
    });
    // The two requests are two traces.
    expect(report!.spanContext().traceId).not.toBe(api!.spanContext().traceId);

    // A caller's W3C traceparent: the request's span continues the caller's trace.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const again = await post('/effects/claim', body, {
      token,
      headers: { 'x-request-id': 'req-trace-parent', traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(again.status).toBe(200);
    const continued = spans('api effect.claim').find((s) => s.attributes['ledger.request_id'] === 'req-trace-parent');
    expect(continued!.spanContext().traceId).toBe(traceId);
    expect(continued!.parentSpanContext?.spanId).toBe(callerSpan);
  });

  it('a replay chunk: one span per chunk, each item claim and provider send its child', async () => {
    const operator = userActor('operator');
    const c = await makeCampaign(t.db, { not_sent: 3 }, { provider: 'sandbox', fourEyesReplay: false });
    const r = await requestReplay({ db: t.db, actor: operator }, { runId: c.runId, confirmCount: 3, reason: 'trace' });
    exporter.reset();
    worker = await startReplayWorker({
      appUrl: t.appUrl,
      db: t.db,
      providers: new ProviderRegistry({ sandbox: { type: 'sandbox', url: sandbox.url } }),
      concurrency: 1,
      reconcileIntervalMs: 600_000,
    });
    await startReplay({ db: t.db, actor: operator, jobs: sender }, { replayId: r.replayId });
    await until(
      'replay to complete',
      async () => (await getReplayProgress({ db: t.db }, { replayId: r.replayId })).status === 'completed',
      120_000,
    );
    await until('the chunk span to end', async () => spans('replay.chunk').length > 0, 30_000);
    const chunks = spans('replay.chunk').filter((s) => s.attributes['ledger.replay_id'] === r.replayId);
    expect(chunks).toHaveLength(1);
    const chunk = chunks[0]!;
    expect(chunk.attributes['ledger.chunk.processed']).toBe(3);
    const claims = childrenOf(chunk, 'ledger.claim_replay_target');
    expect(claims).toHaveLength(3);
    expect(claims.every((s) => s.attributes['ledger.outcome'] === 'answered' && s.attributes['ledger.claimed'])).toBe(
      true,
    );
    const sends = childrenOf(chunk, 'provider.send');
    expect(sends.map((s) => s.attributes['ledger.provider'])).toEqual(['sandbox', 'sandbox', 'sandbox']);
    expect(new Set(sends.map((s) => s.attributes['ledger.key']))).toEqual(
      new Set(claims.map((s) => s.attributes['ledger.key'])),
    );
    expect(sandbox.deliveries).toHaveLength(3);
  });

  it('off: no spans recorded, and traced() runs its function without one', async () => {
    await tracing!.shutdown();
    tracing = undefined;
    expect(tracingOn()).toBe(false);
    const before = exporter.getFinishedSpans().length;
    let seen: unknown = 'not called';
    expect(await traced('nothing', {}, async (span) => ((seen = span), 7))).toBe(7);
    expect(seen).toBeUndefined();
    const token = (await makeKey(t.db)).token;
    const res = await post('/runs', { workflow: 'wf', triggerId: 'evt-untraced' }, { token });
    expect(res.status).toBe(201);
    expect(exporter.getFinishedSpans().length).toBe(before);
  });
});
