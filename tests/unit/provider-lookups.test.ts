// What the SMTP relay's message-status API and the sandbox answer, read by the providers against real
// HTTP servers on this machine. Only delivered, accepted and failed are states the ledger acts on: a
// bounce, a deferral or a message awaiting completion is a miss, which never makes a key done. An
// answer that never ends is read up to the cap and settles nothing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_CAP_BYTES, TRUNCATED_HEADER } from '@/lib/providers/http-answer.ts';
import { SmtpProvider } from '@/lib/providers/smtp/index.ts';
import type { RawResponse } from '@/lib/providers/types.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';

let server: Server;
let base: string;
let smtp: SmtpProvider;
let sandbox: SandboxProvider;
/** Bytes written by each endless answer, once the client went away. */
const endlessWritten: Promise<number>[] = [];

function endless(res: ServerResponse, status: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x7b);
  let written = 0;
  res.writeHead(status, { 'content-type': 'application/json' });
  const pump = () => {
    while (!res.destroyed) {
      written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
  endlessWritten.push(new Promise((resolve) => res.on('close', () => resolve(written))));
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** SMTP relay: GET /relay?messageId=<<state>@d>; sandbox: GET /v1/messages/<state>, POST /v1/messages. */
function route(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url!, base);
  if (url.pathname === '/relay') {
    const state = /^<([^@]+)@/.exec(url.searchParams.get('messageId') ?? '')?.[1] ?? '';
    if (state === 'huge') return endless(res, 200);
    return json(res, 200, { found: true, queueId: 'Q1', ...(state === 'none' ? {} : { state }) });
  }
  if (req.method === 'POST' && url.pathname === '/v1/messages') return endless(res, 201);
  const id = decodeURIComponent(url.pathname.slice('/v1/messages/'.length));
  if (id === 'huge') return endless(res, 200);
  return json(res, 200, { id, status: id });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => route(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  smtp = new SmtpProvider('relay', {
    type: 'smtp',
    host: '127.0.0.1',
    port: 1,
    from: 'ledger@example.com',
    lookupUrl: `${base}/relay`,
  });
  sandbox = new SandboxProvider(base);
});
afterAll(async () => {
  smtp.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const truncatedTo = (raw: RawResponse) => ({
  bytes: raw.body.byteLength,
  marked: raw.headers.some(([k]) => k === TRUNCATED_HEADER),
});

describe('receipt lookups', () => {
  it('S2 C2: the SMTP relay lookup counts delivered, accepted (or no state) and failed; a bounce or a deferral is a miss', async () => {
    expect(await smtp.lookup('<delivered@d>')).toMatchObject({
      found: true,
      receipt: '<delivered@d> queue=Q1',
      state: 'delivered',
    });
    expect(await smtp.lookup('<none@d>')).toMatchObject({ found: true, state: 'accepted' });
    expect(await smtp.lookup('<failed@d>')).toMatchObject({ found: true, state: 'failed' });
    for (const state of ['bounced', 'deferred', 'awaiting_completion'])
      expect(await smtp.lookup(`<${state}@d>`), state).toMatchObject({ found: false });
  });

  it('S2 C2: the sandbox lookup counts delivered, accepted and failed; a message awaiting completion (or any other status) is a miss', async () => {
    for (const state of ['delivered', 'accepted', 'failed'] as const)
      expect(await sandbox.lookup(state)).toMatchObject({ found: true, receipt: state, state });
    for (const state of ['awaiting_completion', 'bounced'])
      expect(await sandbox.lookup(state), state).toMatchObject({ found: false });
    expect(await sandbox.followReference('awaiting_completion')).toMatchObject({ found: false });
  });

  it('S2: an answer that never ends is read up to the cap, marked, and never done: lookups miss, a send is unknown', async () => {
    const before = endlessWritten.length;
    const relay = await smtp.lookup('<huge@d>');
    expect(relay.found).toBe(false);
    expect(truncatedTo(relay.raw)).toEqual({ bytes: BODY_CAP_BYTES, marked: true });

    const looked = await sandbox.lookup('huge');
    expect(looked.found).toBe(false);
    expect(truncatedTo(looked.raw)).toEqual({ bytes: BODY_CAP_BYTES, marked: true });

    const sent = await sandbox.send({ key: 'k', epoch: 1, idempotencyKey: 'i', target: 'a@example.com', payload: {} });
    expect(sent.status).toBe(201);
    expect(truncatedTo(sent)).toEqual({ bytes: BODY_CAP_BYTES, marked: true });
    expect(sandbox.classify(sent)).toMatchObject({ outcome: 'unknown', evidence: { status: 201, truncated: true } });

    // Each transfer was stopped by the client, not read to an end that never comes.
    const written = await Promise.all(endlessWritten.slice(before));
    expect(written).toHaveLength(3);
    for (const w of written) expect(w).toBeGreaterThan(BODY_CAP_BYTES);
  });
});
