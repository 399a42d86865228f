// Outgoing webhooks against real HTTP receivers: Standard Webhooks signing, Idempotency-Key (R2), the
// raw response kept as received (R1), and only hosts configured for the tool (no request elsewhere).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, providerIdempotencyKey } from '@/lib/ledger/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { isCallFailure } from '@/lib/providers/types.ts';
import type { WebhookProvider } from '@/lib/providers/webhook/index.ts';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

type Reply = { status: number; headers?: Record<string, string>; body?: string };
async function receiver(respond: (r: Received) => Reply) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      const out = respond(r);
      res.writeHead(out.status, out.headers ?? {}).end(out.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const SECRET = `whsec_${Buffer.from('a-test-signing-secret-32-bytes!!').toString('base64')}`;
let allowed: Awaited<ReturnType<typeof receiver>>;
let other: Awaited<ReturnType<typeof receiver>>;
let providers: ProviderRegistry;
let hook: WebhookProvider;

beforeAll(async () => {
  allowed = await receiver((r): Reply => {
    const mode = JSON.parse(r.body).data.mode as string;
    switch (mode) {
      case 'ok':
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: `dlv_${r.headers['webhook-id']}` }),
        };
      case 'no_receipt':
        return { status: 204 };
      case 'reject':
        return { status: 422, body: '{"error":"bad payload"}' };
      case 'server_error':
        return { status: 503, body: 'down' };
      case 'exists':
        return { status: 409, headers: { location: 'http://127.0.0.1/deliveries/1' }, body: '{"error":"duplicate"}' };
      case 'redirect':
        return { status: 307, headers: { location: `${other.url}/elsewhere` } };
      default:
        return { status: 400 };
    }
  });
  other = await receiver(() => ({ status: 200, body: '{"id":"x"}' }));
  providers = new ProviderRegistry(
    { hooks: { type: 'webhook', allowedHosts: { notify_partner: [`127.0.0.1:${allowed.port}`] } } },
    { webhookSecret: SECRET },
  );
  hook = providers.get('hooks') as WebhookProvider;
});
afterAll(async () => {
  await allowed?.close();
  await other?.close();
});

function request(target: string, mode: string, epoch = 1) {
  const { key, target: normalized } = deriveKey({
    triggerId: 'evt-1',
    tool: 'notify_partner',
    action: 'order_paid',
    recordId: `order-${mode}`,
    targetType: 'url',
    target,
  });
  return { key, epoch, idempotencyKey: providerIdempotencyKey(key, epoch), target: normalized, payload: { mode } };
}

describe('webhook provider', () => {
  it('R2: signed per Standard Webhooks with the idempotency key as webhook-id and Idempotency-Key; a retry of one (key, epoch) carries the same id', async () => {
    const req = request(`${allowed.url}/hooks`, 'ok');
    const raw = await hook.send(req);
    await hook.send(req);
    const [first, second] = allowed.received.slice(-2);
    expect(first!.headers['webhook-id']).toBe(req.idempotencyKey);
    expect(first!.headers['idempotency-key']).toBe(req.idempotencyKey);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    // Every delivery verifies with the official Standard Webhooks library, as a receiver would check it;
    // a body changed by one byte does not.
    const receiverSide = new Webhook(SECRET);
    for (const r of [first!, second!]) {
      expect(receiverSide.verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
      expect(() => receiverSide.verify(`${r.body} `, r.headers as Record<string, string>)).toThrow();
    }
    const ts = first!.headers['webhook-timestamp'] as string;
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
    // R1: the raw response as received; S2: the receiver's id is the receipt.
    expect(raw.status).toBe(200);
    expect(new TextDecoder().decode(raw.body)).toBe(JSON.stringify({ id: `dlv_${req.idempotencyKey}` }));
    expect(hook.classify(raw)).toEqual({ outcome: 'done', receipt: `dlv_${req.idempotencyKey}` });
  });

  it('only hosts configured for the tool: any other host is refused before a request is made (nothing sent), and redirects are not followed', async () => {
    const before = other.received.length;
    const err = await hook.send(request(`${other.url}/hooks`, 'ok')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isCallFailure(err)).toBe(true);
    expect((err as { providerSent: string }).providerSent).toBe('no');
    const redirected = await hook.send(request(`${allowed.url}/hooks`, 'redirect'));
    expect(redirected.status).toBe(307);
    // A redirect is no refusal: a receiver may redirect after it acted (S4), so it is never failed.
    expect(hook.classify(redirected).outcome).toBe('unknown');
    expect(other.received.length).toBe(before);
  });

  it('S2 S3 S4 R3: responses are classified: 2xx without a receipt is never done, 4xx failed, 5xx unknown, 409 with a pointer already_existed', async () => {
    expect(hook.classify(await hook.send(request(`${allowed.url}/h`, 'no_receipt'))).outcome).toBe('unknown');
    expect(hook.classify(await hook.send(request(`${allowed.url}/h`, 'reject')))).toMatchObject({
      outcome: 'failed',
      evidence: { status: 422 },
    });
    expect(hook.classify(await hook.send(request(`${allowed.url}/h`, 'server_error')))).toMatchObject({
      outcome: 'unknown',
      evidence: { status: 503 },
    });
    expect(hook.classify(await hook.send(request(`${allowed.url}/h`, 'exists')))).toMatchObject({
      outcome: 'already_existed',
      reference: 'http://127.0.0.1/deliveries/1',
    });
  });

  it('a refused connection is a call failure that provably sent nothing', async () => {
    const closed = await receiver(() => ({ status: 200 }));
    await closed.close();
    const p = new ProviderRegistry(
      { h: { type: 'webhook', allowedHosts: { notify_partner: [`127.0.0.1:${closed.port}`] } } },
      { webhookSecret: SECRET },
    ).get('h');
    const err = await p.send(request(`${closed.url}/x`, 'ok')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isCallFailure(err) && err.providerSent).toBe('no');
  });
});
