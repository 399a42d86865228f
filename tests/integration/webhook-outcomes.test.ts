// S3 and S4 for webhooks, end to end through the SDK and the ledger: a connection that is refused
// proves nothing was sent (failed, the key is free for the next claim); a request that was written and
// then got no answer (the connection reset, or the caller's deadline) may have been acted on (unknown).
// Every delivery that does arrive is checked with the official standardwebhooks library.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { deriveKey, providerIdempotencyKey } from '@/lib/ledger/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { isCallFailure } from '@/lib/providers/types.ts';
import { generateWebhookSecret } from '@/lib/providers/webhook/secret.ts';
import type { WebhookProvider } from '@/lib/providers/webhook/index.ts';
import { createLedger, type Ledger } from '@/lib/sdk/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeTool, runtimeActor } from '../helpers/factories.ts';

const SECRET = generateWebhookSecret();
let t: TestDatabase;
let ledger: Ledger;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  toolName = (await makeTool(t.db, { targetType: 'url', actions: ['order_paid'] })).name;
  ledger = createLedger(directTransport({ db: t.db, actor: runtimeActor(['*']) }));
});

type Behaviour = 'answer' | 'reset' | 'hang';
/** A receiver on `port` (0: any) that, once the whole request is in, answers, resets the connection or says nothing. */
async function receiver(behaviour: Behaviour, port = 0) {
  const bodies: { body: string; headers: Record<string, string> }[] = [];
  let arrived: () => void = () => {};
  const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> });
      arrived();
      if (behaviour === 'answer') res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"dlv-1"}');
      else if (behaviour === 'reset') req.socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    bodies,
    requestArrived,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const r = await receiver('answer');
  await r.close();
  return r.port;
}

function hookFor(port: number, timeoutSeconds?: number): WebhookProvider {
  return new ProviderRegistry(
    {
      h: { type: 'webhook', allowedHosts: { [toolName]: [`127.0.0.1:${port}`, `localhost:${port}`] }, timeoutSeconds },
    },
    { webhookSecret: SECRET },
  ).get('h') as WebhookProvider;
}

const effectState = async (key: string) =>
  (await t.owner<{ state: string; epoch: number }>('SELECT state, epoch FROM effect WHERE key = $1', [key])).rows;

async function sendOnce(hook: WebhookProvider, target: string, record: string) {
  const run = await ledger.createRun({ workflow: 'partners', triggerId: `evt-${randomUUID()}` });
  return ledger.send(hook, { run: run.runId, tool: toolName, action: 'order_paid', record, target }, { n: 1 });
}

describe('webhook outcomes (S3, S4)', () => {
  it('S3: a refused connection (127.0.0.1 and localhost) is a call failure that provably sent nothing', async () => {
    const port = await closedPort();
    const hook = hookFor(port);
    for (const host of ['127.0.0.1', 'localhost']) {
      const { key, target } = deriveKey({
        triggerId: 'evt-x',
        tool: toolName,
        action: 'order_paid',
        recordId: 'o-1',
        targetType: 'url',
        target: `http://${host}:${port}/hook`,
      });
      const error = await hook
        .send({ key, epoch: 1, idempotencyKey: providerIdempotencyKey(key, 1), target, payload: {} })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(isCallFailure(error) && error.providerSent).toBe('no');
      expect(isCallFailure(error) && error.detail.code).toBe('ECONNREFUSED');
    }
  });

  it('S3: through the ledger a refused connection is failed and frees the key: the next claim at the same epoch wins and delivers, signed', async () => {
    const port = await closedPort();
    const target = `http://127.0.0.1:${port}/hook`;
    const run = await ledger.createRun({ workflow: 'partners', triggerId: `evt-${randomUUID()}` });
    const spec = { run: run.runId, tool: toolName, action: 'order_paid', record: 'o-refused', target };
    const first = await ledger.send(hookFor(port), spec, { n: 1 });
    expect(first).toMatchObject({ status: 'failed', epoch: 1, evidence: { providerSent: 'no' } });
    expect(await effectState(first.key)).toEqual([{ state: 'failed', epoch: 1 }]);

    const up = await receiver('answer', port);
    try {
      const second = await ledger.send(hookFor(port), spec, { n: 1 });
      expect(second).toMatchObject({ status: 'done', epoch: 1, receipt: 'dlv-1', key: first.key });
      expect(await effectState(first.key)).toEqual([{ state: 'done', epoch: 1 }]);
      expect(up.bodies).toHaveLength(1);
      const delivered = up.bodies[0]!;
      expect(new Webhook(SECRET).verify(delivered.body, delivered.headers)).toMatchObject({ epoch: 1 });
    } finally {
      await up.close();
    }
  });

  it('S4: a connection reset after the request was written is unknown, and the key stays held', async () => {
    const r = await receiver('reset');
    try {
      const result = await sendOnce(hookFor(r.port), `http://127.0.0.1:${r.port}/hook`, 'o-reset');
      expect(r.bodies).toHaveLength(1);
      expect(new Webhook(SECRET).verify(r.bodies[0]!.body, r.bodies[0]!.headers)).toBeTruthy();
      expect(result.status).toBe('unknown');
      expect(await effectState(result.key)).toEqual([{ state: 'unknown', epoch: 1 }]);
    } finally {
      await r.close();
    }
  });

  it('S4: a deadline that passes after the request was written is an ambiguous call failure (maybe sent), not failed', async () => {
    const r = await receiver('hang');
    try {
      const { key, target } = deriveKey({
        triggerId: 'evt-y',
        tool: toolName,
        action: 'order_paid',
        recordId: 'o-hang',
        targetType: 'url',
        target: `http://127.0.0.1:${r.port}/hook`,
      });
      const deadline = new AbortController();
      // The deadline fires once the receiver holds the whole request: no timing is assumed.
      void r.requestArrived.then(() => deadline.abort(new DOMException('deadline passed', 'TimeoutError')));
      const error = await hookFor(r.port)
        .send({ key, epoch: 1, idempotencyKey: providerIdempotencyKey(key, 1), target, payload: {} }, deadline.signal)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(r.bodies).toHaveLength(1);
      expect(isCallFailure(error) && error.providerSent).toBe('maybe');
    } finally {
      await r.close();
    }
  });

  it("S4: the provider's own timeout after the request was written leaves the effect unknown through the ledger", async () => {
    const r = await receiver('hang');
    try {
      const result = await sendOnce(hookFor(r.port, 1), `http://127.0.0.1:${r.port}/hook`, 'o-timeout');
      expect(r.bodies).toHaveLength(1);
      expect(result.status).toBe('unknown');
      expect(await effectState(result.key)).toEqual([{ state: 'unknown', epoch: 1 }]);
    } finally {
      await r.close();
    }
  });
});
