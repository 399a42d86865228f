// The sandbox provider's failure modes, each through the SDK over the HTTP API (route handlers in
// process, sandbox on a real socket), counting exactly what each recipient got.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger, httpTransport, type Ledger } from '@/lib/sdk/index.ts';
import { SandboxProvider, startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool } from '../helpers/factories.ts';
import { BASE, makeKey, routeFetch, useApiDb } from './api-support.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import '@/lib/providers/sandbox/register.ts';

let t: TestDatabase;
let sandbox: Sandbox;
let provider: SandboxProvider;
let ledger: Ledger;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  sandbox = await startSandbox();
  provider = new SandboxProvider(sandbox.url);
  const key = await makeKey(t.db);
  ledger = createLedger(httpTransport({ baseUrl: BASE, runtimeKey: key.token, fetch: routeFetch }));
  toolName = (await makeTool(t.db)).name;
});
afterAll(async () => {
  await sandbox?.stop();
});

const spec = (run: string, target: string, record = `rec-${target}`) => ({
  run,
  tool: toolName,
  action: 'campaign_welcome',
  record,
  target,
});
const effectRow = (key: string) => t.db.effect.findFirstOrThrow({ where: { key }, orderBy: { epoch: 'desc' } });

describe('sandbox provider failure modes', () => {
  it('S2, R1, R2: a normal send is done with the message id as receipt; the raw response is stored; the provider idempotency key dedupes a resend', async () => {
    const { runId } = await makeRun(t.db);
    const r = await ledger.send(provider, spec(runId, 'ok@example.com'), { subject: 'Welcome', body: 'Hello' });
    expect(r.status).toBe('done');
    if (r.status !== 'done') return;
    expect(r.receipt).toMatch(/^msg_/);
    expect(sandbox.deliveriesTo('ok@example.com')).toHaveLength(1);
    const attempt = await t.db.attempt.findFirstOrThrow({ where: { key: r.key } });
    expect(attempt.responseStatus).toBe(201);
    expect(JSON.parse(Buffer.from(attempt.responseBody!).toString('utf8')).id).toBe(r.receipt);
    const idem = sandbox.deliveriesTo('ok@example.com')[0]!.idempotencyKey!;
    const resend = await provider.send({
      key: r.key,
      epoch: 1,
      idempotencyKey: idem,
      target: 'ok@example.com',
      payload: { subject: 'Welcome again', body: 'reworded' },
    });
    expect(resend.status).toBe(200);
    expect(sandbox.deliveriesTo('ok@example.com')).toHaveLength(1);
    const lookup = await provider.lookup(r.receipt);
    expect(lookup).toMatchObject({ found: true, receipt: r.receipt, state: 'delivered' });
  });

  it('S3: a 4xx reject is failed with the response as evidence, nothing is delivered, and the next claim may proceed', async () => {
    const { runId } = await makeRun(t.db);
    sandbox.failNext('reject', { to: 'gone@example.com' });
    const first = await ledger.send(provider, spec(runId, 'gone@example.com'), { subject: 's', body: 'b' });
    expect(first.status).toBe('failed');
    expect((await effectRow(first.key)).state).toBe('failed');
    expect(sandbox.deliveriesTo('gone@example.com')).toHaveLength(0);
    const second = await ledger.send(provider, spec(runId, 'gone@example.com'), { subject: 's', body: 'b' });
    expect(second.status).toBe('done');
    expect(sandbox.deliveriesTo('gone@example.com')).toHaveLength(1);
  });

  it('S4: a 5xx (before or after sending) is unknown, never failed, and never retried automatically', async () => {
    const { runId } = await makeRun(t.db);
    sandbox.failNext('server_error', { to: 'five@example.com' });
    sandbox.failNext('server_error_after_send', { to: 'fiveafter@example.com' });
    const a = await ledger.send(provider, spec(runId, 'five@example.com'), { subject: 's', body: 'b' });
    const b = await ledger.send(provider, spec(runId, 'fiveafter@example.com'), { subject: 's', body: 'b' });
    expect([a.status, b.status]).toEqual(['unknown', 'unknown']);
    expect(sandbox.deliveriesTo('five@example.com')).toHaveLength(0);
    expect(sandbox.deliveriesTo('fiveafter@example.com')).toHaveLength(1);
    const again = await ledger.send(provider, spec(runId, 'fiveafter@example.com'), { subject: 's', body: 'b' });
    expect(again).toMatchObject({ status: 'skipped', state: 'unknown' });
    expect(sandbox.deliveriesTo('fiveafter@example.com')).toHaveLength(1);
  });

  it('S4: a timeout after the provider accepted is unknown (the message was delivered; no response was stored)', async () => {
    const { runId } = await makeRun(t.db);
    sandbox.failNext('timeout_after_accept', { to: 'slow@example.com' });
    const r = await ledger.send(
      provider,
      spec(runId, 'slow@example.com'),
      { subject: 's', body: 'b' },
      { timeoutMs: 300 },
    );
    expect(r.status).toBe('unknown');
    if (r.status === 'unknown') expect(r.evidence.timedOut).toBe(true);
    expect(sandbox.deliveriesTo('slow@example.com')).toHaveLength(1);
    const attempt = await t.db.attempt.findFirstOrThrow({ where: { key: r.key } });
    expect(attempt.respondedAt).toBeNull();
  });

  it('R3, S6: body-hash dedup answering already_existed=true pointing at a failed prior object makes the key stuck', async () => {
    const { runId } = await makeRun(t.db);
    sandbox.failNext('already_existed_failed', { to: 'dup@example.com' });
    const r = await ledger.send(provider, spec(runId, 'dup@example.com'), { subject: 's', body: 'b' });
    expect(r.status).toBe('stuck');
    if (r.status === 'stuck')
      expect(r.evidence).toMatchObject({ priorState: 'failed', alreadyExisted: expect.stringMatching(/^msg_/) });
    expect((await effectRow(r.key)).state).toBe('stuck');
    expect(sandbox.deliveriesTo('dup@example.com')).toHaveLength(0);
  });

  it('R3: with body-hash dedup on, a second key with the same content follows the pointer to the delivered prior message and is done with its receipt', async () => {
    const dedup = await startSandbox({ bodyHashDedup: true });
    try {
      const p = new SandboxProvider(dedup.url);
      const { runId } = await makeRun(t.db);
      const first = await ledger.send(p, spec(runId, 'same@example.com', 'order-1'), {
        subject: 'Receipt',
        body: 'Thanks',
      });
      const second = await ledger.send(p, spec(runId, 'same@example.com', 'order-2'), {
        subject: 'Receipt',
        body: 'Thanks',
      });
      expect(first.status).toBe('done');
      expect(second.status).toBe('done');
      if (first.status === 'done' && second.status === 'done') expect(second.receipt).toBe(first.receipt);
      expect(dedup.deliveriesTo('same@example.com')).toHaveLength(1);
    } finally {
      await dedup.stop();
    }
  });

  it('S6: 201 with a one-shot completion token that is not redeemed is stuck; a tool that redeems it is done, and the token works once', async () => {
    const { runId } = await makeRun(t.db);
    sandbox.failNext('completion_token', { to: 'token@example.com' });
    const lost = await ledger.send(provider, spec(runId, 'token@example.com'), { subject: 's', body: 'b' });
    expect(lost.status).toBe('stuck');
    expect(sandbox.deliveriesTo('token@example.com')).toHaveLength(0);

    sandbox.failNext('completion_token', { to: 'token2@example.com' });
    let token = '';
    let messageId = '';
    const redeemed = await ledger.effect(
      spec(runId, 'token2@example.com'),
      async ({ idempotencyKey, key, epoch, signal }) => {
        const raw = await provider.send(
          { key, epoch, idempotencyKey, target: 'token2@example.com', payload: { subject: 's', body: 'b' } },
          signal,
        );
        const issued = JSON.parse(new TextDecoder().decode(raw.body)) as { id: string; completionToken: string };
        token = issued.completionToken;
        messageId = issued.id;
        return provider.complete(issued.id, issued.completionToken, signal);
      },
      { provider },
    );
    expect(redeemed.status).toBe('done');
    expect(sandbox.deliveriesTo('token2@example.com')).toHaveLength(1);
    expect((await provider.complete(messageId, token)).status).toBe(410);
    expect(sandbox.deliveriesTo('token2@example.com')).toHaveLength(1);
  });

  it('C2: a message inside the settle lag is not visible to lookups; after it, it is; accept_then_fail shows failed with no delivery', async () => {
    const { runId } = await makeRun(t.db);
    sandbox.setSettleLag(60_000);
    const r = await ledger.send(provider, spec(runId, 'lag@example.com'), { subject: 's', body: 'b' });
    expect(r.status).toBe('done');
    if (r.status !== 'done') return;
    expect((await provider.lookup(r.receipt)).found).toBe(false);
    sandbox.setSettleLag(0);
    expect(await provider.lookup(r.receipt)).toMatchObject({ found: true, state: 'delivered' });
    sandbox.failNext('accept_then_fail', { to: 'bounce@example.com' });
    const b = await ledger.send(provider, spec(runId, 'bounce@example.com'), { subject: 's', body: 'b' });
    expect(b.status).toBe('done');
    if (b.status === 'done') expect(await provider.lookup(b.receipt)).toMatchObject({ found: true, state: 'failed' });
    expect(sandbox.deliveriesTo('bounce@example.com')).toHaveLength(0);
  });

  it('S3, S4: a refused connection proves nothing was sent and frees the key (failed); the registry builds the sandbox from configuration', async () => {
    const down = await startSandbox();
    const url = down.url;
    await down.stop();
    const { runId } = await makeRun(t.db);
    const refused = await ledger.send(new SandboxProvider(url), spec(runId, 'down@example.com'), {
      subject: 's',
      body: 'b',
    });
    expect(refused.status).toBe('failed');
    if (refused.status === 'failed') expect(refused.evidence.providerSent).toBe('no');
    const registry = new ProviderRegistry({ mail: { type: 'sandbox', url: sandbox.url } });
    const fromRegistry = registry.get('mail');
    expect(fromRegistry).toBeInstanceOf(SandboxProvider);
    expect(fromRegistry.name).toBe('mail');
    const retried = await ledger.send(fromRegistry, spec(runId, 'down@example.com'), { subject: 's', body: 'b' });
    expect(retried.status).toBe('done');
    expect(sandbox.deliveriesTo('down@example.com')).toHaveLength(1);
  });
});
