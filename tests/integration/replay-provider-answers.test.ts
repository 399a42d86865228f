// What the replay executor and the reconciler make of provider answers that are no ordinary success
// or refusal: a webhook target whose host is not allowed for the tool (refused for good, nothing
// sent), a prior object in a state the ledger does not act on, and a receipt lookup that reports a
// bounce. None of them may complete a key, and a permanent refusal must not hold up the replay.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePlan, submitPlan } from '@/lib/ledger/index.ts';
import { ProviderRegistry, type RegisteredProvider } from '@/lib/providers/registry.ts';
import type { LookupResult, RawResponse } from '@/lib/providers/types.ts';
import { generateWebhookSecret } from '@/lib/providers/webhook/secret.ts';
import { reconcileOnce, requestReplay } from '@/lib/replay/index.ts';
import { runChunk } from '@/lib/replay/run-chunk.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, runtimeActor, suffix, userActor } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 6 });
let receiver: Server;
let local: string;

beforeAll(async () => {
  // The allowed webhook receiver and the SMTP relay's message-status API, on one local server.
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url!.startsWith('/relay')) return void res.end(JSON.stringify({ found: true, state: 'bounced' }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `dlv-${suffix()}` }));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  local = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

/** A tool on `provider`, an approved plan with these targets, and a running forced replay of it. */
async function runningReplay(provider: string, targetType: 'url' | 'email', targets: string[]) {
  const tool = await t.db.toolDefinition.create({
    data: {
      name: `notify_${suffix()}`,
      actions: ['order_paid'],
      targetType,
      provider,
      generatedInputs: [],
      supportsIdempotencyKey: true,
      supportsReceiptLookup: true,
      leaseSeconds: 300,
      settleWindowSeconds: 60,
      fourEyesReplay: false,
    },
  });
  const { runId } = await makeRun(t.db);
  const items = targets.map((target, i) => ({ tool: tool.name, action: 'order_paid', recordId: `order-${i}`, target }));
  const plan = await submitPlan({ db: t.db, actor: runtimeActor() }, { runId, items });
  const operator = userActor('operator');
  await approvePlan({ db: t.db, actor: operator }, { planId: plan.planId, itemsHash: plan.itemsHash });
  const r = await requestReplay(
    { db: t.db, actor: operator },
    { runId, confirmCount: targets.length, reason: 'partner outage' },
  );
  await t.owner(`UPDATE replay SET status = 'running' WHERE id = $1`, [r.replayId]);
  const {
    rows: [range],
  } = await t.owner<{ from_id: string; to_id: string }>(
    `SELECT min(id)::text AS from_id, max(id)::text AS to_id FROM replay_item WHERE replay_id = $1`,
    [r.replayId],
  );
  return {
    tool: tool.name,
    replayId: r.replayId,
    chunk: { replayId: r.replayId, fromId: range!.from_id, toId: range!.to_id },
  };
}

const itemsOf = (replayId: string) =>
  t.db.replayItem.findMany({
    where: { replayId },
    orderBy: { id: 'asc' },
    select: { key: true, outcome: true, note: true },
  });
const effectOf = async (key: string) =>
  (
    await t.owner<{ state: string; evidence: Record<string, unknown> | null }>(
      `SELECT e.state::text AS state,
              (SELECT evidence FROM effect_transition x WHERE x.key = e.key ORDER BY x.id DESC LIMIT 1) AS evidence
         FROM effect e WHERE e.key = $1`,
      [key],
    )
  ).rows[0]!;

describe('provider answers the replay and the reconciler must not misread', () => {
  it('S3: a webhook target whose host is not allowed for the tool is failed with the refusal as evidence, and the replay goes on and completes', async () => {
    const refused = 'https://elsewhere.example/hook';
    const r = await runningReplay('hooks', 'url', [refused, `http://${local}/hook`]);
    const providers = new ProviderRegistry(
      { hooks: { type: 'webhook', allowedHosts: { [r.tool]: [local] } } },
      { webhookSecret: generateWebhookSecret() },
    );
    await expect(runChunk({ db: t.db, providers, itemConcurrency: 1 }, r.chunk)).resolves.toMatchObject({
      processed: 2,
    });

    const [first, second] = await itemsOf(r.replayId);
    expect(first).toMatchObject({
      outcome: 'failed',
      note: expect.stringMatching(/^refused: host of .* is not configured/),
    });
    expect(await effectOf(first!.key)).toMatchObject({
      state: 'failed',
      evidence: { refused: 'host_not_allowed', permanent: true, sent: 'no' },
    });
    expect(second).toMatchObject({ outcome: 'sent' });
    const replay = await t.db.replay.findUniqueOrThrow({ where: { id: r.replayId } });
    expect(replay).toMatchObject({ status: 'completed', sent: 1, failed: 1 });
  });

  it('S2 R3: a prior object in a state other than delivered or accepted does not complete the key; it stays pending', async () => {
    const r = await runningReplay('odd', 'email', [`someone-${suffix()}@example.com`]);
    const raw: RawResponse = { status: 409, headers: [], body: new TextEncoder().encode('{"prior":"p-1"}') };
    // A provider's own client that reports a state the LookupResult type does not name.
    const odd: RegisteredProvider = {
      name: 'odd',
      supportsIdempotencyKey: true,
      supportsReceiptLookup: false,
      send: () => Promise.resolve(raw),
      classify: () => ({ outcome: 'already_existed', reference: 'p-1', evidence: { status: 409 } }),
      lookup: () => Promise.reject(new Error('no lookup')),
      followReference: (reference) =>
        Promise.resolve({ found: true, receipt: reference, state: 'bounced', raw } as unknown as LookupResult),
    };
    await runChunk({ db: t.db, providers: new ProviderRegistry({}, {}, { odd }), itemConcurrency: 1 }, r.chunk);
    const [item] = await itemsOf(r.replayId);
    expect(item).toMatchObject({ outcome: 'unknown' });
    expect((await effectOf(item!.key)).state).toBe('pending');
  });

  it('S2 C1: the reconciler does not complete a key whose receipt lookup reports a bounce; after the settle window it is unknown', async () => {
    const tool = await t.db.toolDefinition.create({
      data: {
        name: `send_email_${suffix()}`,
        actions: ['campaign_welcome'],
        targetType: 'email',
        provider: 'relay',
        generatedInputs: [],
        supportsIdempotencyKey: true,
        supportsReceiptLookup: true,
        leaseSeconds: 300,
        settleWindowSeconds: 60,
      },
    });
    const e = await makeEffect(t.db, 'pending', { tool: tool.name });
    await t.owner(`UPDATE effect SET lease_expires_at = now() - interval '1 second' WHERE key = $1`, [e.key]);
    const providers = new ProviderRegistry({
      relay: {
        type: 'smtp',
        host: '127.0.0.1',
        port: 1,
        from: 'ledger@example.com',
        lookupUrl: `http://${local}/relay`,
      },
    });
    try {
      expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, done: 0, waiting: 1 });
      expect((await effectOf(e.key)).state).toBe('pending');

      await t.owner(`UPDATE attempt SET started_at = now() - interval '10 minutes' WHERE key = $1`, [e.key]);
      expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, done: 0, unknown: 1 });
      const after = await effectOf(e.key);
      expect(after.state).toBe('unknown');
      expect(after.evidence).toMatchObject({ lookup: { status: 200, body: expect.stringContaining('bounced') } });
    } finally {
      await providers.close();
    }
  });
});
