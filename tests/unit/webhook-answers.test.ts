// How the webhook provider reads and classifies what a receiver answered, against real HTTP servers on
// this machine: a body that never ends is cut at the cap, a body cut off part way keeps the status and
// headers that came before it, neither is ever done; only a final 4xx refuses; a lookup counts only
// the states the ledger acts on; and only a connect or DNS failure proves that nothing was sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, providerIdempotencyKey } from '@/lib/ledger/keys.ts';
import { BODY_CAP_BYTES, BODY_ERROR_HEADER, TRUNCATED_HEADER } from '@/lib/providers/http-answer.ts';
import type { RawResponse } from '@/lib/providers/types.ts';
import { generateWebhookSecret } from '@/lib/providers/webhook/secret.ts';
import { neverConnected, WebhookProvider } from '@/lib/providers/webhook/index.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
let server: Server;
let base: string;
let hook: WebhookProvider;
/** Resolves when the receiver's streaming answer has been closed by the client. */
let streamClosed: Promise<number>;

/** Writes 64 KiB chunks for as long as the client reads them, and reports the bytes written when the
 *  client goes away: a receiver whose answer never ends. */
function endless(res: ServerResponse, headers: Record<string, string>): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let written = 0;
  res.writeHead(200, headers);
  const pump = () => {
    while (!res.destroyed) {
      written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
  return new Promise((resolve) => res.on('close', () => resolve(written)));
}

beforeAll(async () => {
  routes.set('/endless', (_req, res) => {
    streamClosed = endless(res, { 'webhook-receipt': 'dlv-endless', 'content-type': 'application/json' });
  });
  routes.set('/cut-off', (req, res) => {
    res.writeHead(200, { 'webhook-receipt': 'dlv-cut', 'content-length': '100' });
    res.write('{"id":"dlv', () => req.socket.destroy());
  });
  routes.set('/lookup', (req, res) => {
    const receipt = new URL(req.url!, base).searchParams.get('receipt')!;
    if (receipt === 'huge') return void endless(res, { 'content-type': 'application/json' });
    const state = receipt === 'no-state' ? undefined : receipt;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ found: true, state }));
  });
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => routes.get(new URL(req.url!, 'http://x').pathname)?.(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  hook = new WebhookProvider('hooks', {
    type: 'webhook',
    allowedHosts: { notify_partner: [`127.0.0.1:${port}`] },
    lookupUrl: `${base}/lookup`,
    secret: generateWebhookSecret(),
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function request(path: string) {
  const { key, target } = deriveKey({
    triggerId: 'evt-answers',
    tool: 'notify_partner',
    action: 'order_paid',
    recordId: `order${path.replace(/\//g, '-')}`,
    targetType: 'url',
    target: `${base}${path}`,
  });
  return { key, epoch: 1, idempotencyKey: providerIdempotencyKey(key, 1), target, payload: {} };
}
const header = (raw: RawResponse, name: string) => raw.headers.find(([k]) => k === name)?.[1];
const answer = (status: number, headers: [string, string][] = [], body = ''): RawResponse => ({
  status,
  headers,
  body: new TextEncoder().encode(body),
});

describe('webhook answers', () => {
  it('S2: a body that never ends is read up to the cap, the transfer stopped, the cut marked, and the answer is unknown even with a receipt header', async () => {
    const raw = await hook.send(request('/endless'));
    expect(raw.status).toBe(200);
    expect(raw.body.byteLength).toBe(BODY_CAP_BYTES);
    expect(header(raw, 'webhook-receipt')).toBe('dlv-endless');
    expect(header(raw, TRUNCATED_HEADER)).toContain(String(BODY_CAP_BYTES));
    expect(await streamClosed).toBeGreaterThan(BODY_CAP_BYTES);
    expect(hook.classify(raw)).toMatchObject({
      outcome: 'unknown',
      evidence: { status: 200, truncated: true, capBytes: BODY_CAP_BYTES, keptBytes: BODY_CAP_BYTES },
    });
  });

  it('S4 R1: a body cut off part way keeps the status, the headers and the bytes that arrived: unknown, not a lost answer', async () => {
    const raw = await hook.send(request('/cut-off'));
    expect(raw.status).toBe(200);
    expect(header(raw, 'webhook-receipt')).toBe('dlv-cut');
    expect(new TextDecoder().decode(raw.body)).toBe('{"id":"dlv');
    expect(header(raw, BODY_ERROR_HEADER)).toMatch(/after 10 bytes/);
    expect(hook.classify(raw)).toMatchObject({ outcome: 'unknown', evidence: { status: 200, keptBytes: 10 } });
  });

  it('S3 S4: only a final 4xx refuses; 408, 429, a 409 without a pointer and a redirect decide nothing (unknown)', () => {
    for (const status of [408, 429, 409, 303, 307, 500, 503])
      expect(hook.classify(answer(status, [], 'try later')), String(status)).toMatchObject({
        outcome: 'unknown',
        evidence: { status },
      });
    for (const status of [400, 401, 404, 410, 422])
      expect(hook.classify(answer(status)), String(status)).toMatchObject({ outcome: 'failed', evidence: { status } });
    expect(hook.classify(answer(409, [['location', `${base}/deliveries/1`]]))).toMatchObject({
      outcome: 'already_existed',
      reference: `${base}/deliveries/1`,
    });
  });

  it('S2 C2: a lookup counts delivered, accepted (or no state) and failed; any other state, or an answer past the cap, is a miss', async () => {
    expect(await hook.lookup('delivered')).toMatchObject({ found: true, receipt: 'delivered', state: 'delivered' });
    expect(await hook.lookup('no-state')).toMatchObject({ found: true, state: 'accepted' });
    expect(await hook.lookup('failed')).toMatchObject({ found: true, state: 'failed' });
    for (const state of ['bounced', 'awaiting_completion', 'deferred'])
      expect(await hook.lookup(state), state).toMatchObject({ found: false });
    const huge = await hook.lookup('huge');
    expect(huge.found).toBe(false);
    expect(huge.raw.body.byteLength).toBe(BODY_CAP_BYTES);
    expect(header(huge.raw, TRUNCATED_HEADER)).toBeDefined();
  });

  it('S3 S4: only a failed connect or name lookup proves nothing was sent; an unreachable reported on an open socket does not', () => {
    const socketError = (code: string, syscall: string) =>
      Object.assign(new Error(`${syscall} ${code}`), { code, syscall });
    const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });
    // Linux reports an ICMP unreachable on a connected socket too: the body may already be out.
    for (const code of ['EHOSTUNREACH', 'ENETUNREACH'])
      for (const syscall of ['write', 'read', 'writev'])
        expect(neverConnected(fetchFailed(socketError(code, syscall))), `${code} on ${syscall}`).toBe(false);
    expect(neverConnected(fetchFailed(Object.assign(new Error('other side closed'), { code: 'EHOSTUNREACH' })))).toBe(
      false,
    );
    expect(neverConnected(fetchFailed(socketError('ECONNRESET', 'read')))).toBe(false);
    // Before the connection exists nothing can have been written.
    for (const code of ['EHOSTUNREACH', 'ENETUNREACH', 'ECONNREFUSED'])
      expect(neverConnected(fetchFailed(socketError(code, 'connect'))), code).toBe(true);
    expect(neverConnected(fetchFailed(socketError('ENOTFOUND', 'getaddrinfo')))).toBe(true);
    // Several addresses (localhost: ::1 and 127.0.0.1): nothing was sent only if every one failed to connect.
    const refused = socketError('ECONNREFUSED', 'connect');
    expect(neverConnected(fetchFailed(new AggregateError([refused, refused])))).toBe(true);
    expect(neverConnected(fetchFailed(new AggregateError([refused, socketError('EHOSTUNREACH', 'write')])))).toBe(
      false,
    );
  });
});
