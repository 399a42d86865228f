// Z5: the HTTP transport against a real node:http server that misbehaves on purpose: dropped
// connections, 503 and 429 with Retry-After, 500, 422, 409, hangs. Gaps between attempts are measured
// with the server's own receive timestamps.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter } from '@/lib/sdk/retry.ts';
import { httpTransport, type HttpTransportOptions } from '@/lib/sdk/index.ts';
import {
  ledgerApiError as failure,
  problemReply,
  useMisbehavingServers,
  type MisbehavingServer,
  type Reply,
} from '../helpers/misbehaving-server.ts';

const RUN = { runId: '00000000-0000-4000-8000-000000000001', workflow: 'wf', triggerId: 't', status: 'running' };
const created: Reply = { status: 201, body: { ...RUN, createdAt: '2026-01-01T00:00:00Z' } };
const serve = useMisbehavingServers();
const transport = (server: { url: string }, options: Partial<HttpTransportOptions> = {}) =>
  httpTransport({ baseUrl: server.url, runtimeKey: 'elk_test_key', retryBaseDelayMs: 1, ...options });

const keys = (server: MisbehavingServer) => server.received.map((r) => r.headers['idempotency-key']);
const gaps = (server: MisbehavingServer) => server.received.slice(1).map((r, i) => r.at - server.received[i]!.at);

describe('HTTP transport retries', () => {
  it('Z5: dropped connections are retried with the same Idempotency-Key and body until an answer comes; the next request gets a new key', async () => {
    const server = await serve(['drop', 'drop', created, created]);
    const t = transport(server, { retries: 3 });
    await expect(t.createRun({ workflow: 'wf', triggerId: 't' })).resolves.toMatchObject({ runId: RUN.runId });
    expect(server.received).toHaveLength(3);
    expect(new Set(keys(server)).size).toBe(1);
    expect(keys(server)[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(server.received.map((r) => r.body)).size).toBe(1);
    await t.createRun({ workflow: 'wf', triggerId: 't' });
    expect(keys(server)[3]).not.toBe(keys(server)[0]);
  });

  it('Z5: a 503 with Retry-After (seconds) is retried no sooner than the server asked, with the same key', async () => {
    const server = await serve([problemReply(503, 'unavailable', {}, { 'retry-after': '1' }), created]);
    await transport(server).createRun({ workflow: 'wf', triggerId: 't' });
    expect(server.received).toHaveLength(2);
    expect(gaps(server)[0]).toBeGreaterThanOrEqual(1000);
    expect(gaps(server)[0]).toBeLessThan(1500);
    expect(new Set(keys(server)).size).toBe(1);
  });

  it('Z5: a 429 with Retry-After as an HTTP date is retried no sooner than that date', async () => {
    let date = '';
    const server = await serve((i) => {
      if (i > 0) return created;
      // A whole second at least one second ahead: HTTP dates have no fractions.
      date = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000).toUTCString();
      return problemReply(429, 'rate_limited', {}, { 'retry-after': date });
    });
    await transport(server).createRun({ workflow: 'wf', triggerId: 't' });
    expect(server.received).toHaveLength(2);
    expect(server.received[1]!.wall).toBeGreaterThanOrEqual(Date.parse(date));
    expect(new Set(keys(server)).size).toBe(1);
  });

  it('Z5: without Retry-After the waits are full-jitter exponential backoff, each below its ceiling', async () => {
    const server = await serve(['drop', 'drop', 'drop', created]);
    await transport(server, { retries: 3, retryBaseDelayMs: 40 }).createRun({ workflow: 'wf', triggerId: 't' });
    const measured = gaps(server);
    expect(measured).toHaveLength(3);
    // Ceilings 40, 80 and 160 ms; a little room for the reconnect and the scheduler.
    measured.forEach((gap, n) => expect(gap).toBeLessThan(40 * 2 ** n + 60));
    // The policy itself: the ceiling doubles per retry and is capped; jitter spans [0, ceiling).
    const policy = { retries: 9, baseDelayMs: 250, maxDelayMs: 30_000 };
    expect([0, 1, 2, 3].map((n) => backoffDelay(n, policy, () => 0.999999))).toEqual([249, 499, 999, 1999]);
    expect(backoffDelay(12, policy, () => 0.999999)).toBe(29_999);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
  });

  it('Retry-After: delay-seconds or an HTTP date; anything else is ignored (backoff applies)', () => {
    const now = Date.parse('Tue, 01 Dec 2026 10:00:00 GMT');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 09:00:00 GMT', now)).toBe(0);
    for (const bad of ['1.5', '-1', 'soon', ''] as const) expect(parseRetryAfter(bad, now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('Z5: 409 in_progress (our own earlier attempt still running) is waited for with the same key; 502 from a proxy too', async () => {
    const server = await serve([
      problemReply(409, 'conflict', { idempotency: 'in_progress' }),
      { status: 502, headers: { 'content-type': 'text/html' }, body: '<html>bad gateway</html>' },
      created,
    ]);
    await transport(server).createRun({ workflow: 'wf', triggerId: 't' });
    expect(server.received).toHaveLength(3);
    expect(new Set(keys(server)).size).toBe(1);
  });
});

describe('HTTP transport: an earlier attempt still running', () => {
  it('Z5: 409 in_progress keeps being asked, with the same key, past the usual retries until the first attempt answers; for at most inProgressWaitMs', async () => {
    const inProgress = problemReply(409, 'conflict', { idempotency: 'in_progress' }, { 'retry-after': '0' });
    const slow = await serve((i) => (i < 8 ? inProgress : created));
    await expect(transport(slow, { retries: 2 }).createRun({ workflow: 'wf', triggerId: 't' })).resolves.toMatchObject({
      runId: RUN.runId,
    });
    expect(slow.received).toHaveLength(9);
    expect(new Set(keys(slow)).size).toBe(1);

    const stuck = await serve(() => inProgress);
    const started = Date.now();
    const error = await failure(
      transport(stuck, { retries: 2, inProgressWaitMs: 300 }).createRun({ workflow: 'wf', triggerId: 't' }),
    );
    expect(error).toMatchObject({
      status: 409,
      code: 'conflict',
      details: expect.objectContaining({ idempotency: 'in_progress' }),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(stuck.received.length).toBeGreaterThan(3);
    expect(new Set(keys(stuck)).size).toBe(1);
  });
});

describe('HTTP transport errors', () => {
  it('422, 409, 500 and other 4xx are never retried: one request, a LedgerApiError with the problem document', async () => {
    const cases: [Reply, number, string][] = [
      [problemReply(422, 'validation', { field: 'triggerId' }), 422, 'validation'],
      [problemReply(409, 'invalid_transition', { from: 'done' }), 409, 'invalid_transition'],
      [problemReply(500, 'internal'), 500, 'internal'],
      [problemReply(403, 'forbidden'), 403, 'forbidden'],
      [{ status: 400, headers: { 'content-type': 'text/plain' }, body: 'bad request' }, 400, 'http_error'],
    ];
    for (const [reply, status, code] of cases) {
      const server = await serve([reply, created]);
      const error = await failure(transport(server).createRun({ workflow: 'wf', triggerId: 't' }));
      expect(server.received).toHaveLength(1);
      expect(error).toMatchObject({ status, code, details: expect.objectContaining({ attempts: 1 }) });
      if (code === 'validation') expect(error).toMatchObject({ field: 'triggerId', message: 'validation on purpose' });
      if (code === 'invalid_transition') expect(error.details).toMatchObject({ from: 'done' });
    }
  });

  it('retries that run out end with the last answer, typed, and the number of attempts', async () => {
    const server = await serve([problemReply(503, 'unavailable', {}, { 'retry-after': '0' })]);
    const error = await failure(transport(server, { retries: 2 }).createRun({ workflow: 'wf', triggerId: 't' }));
    expect(server.received).toHaveLength(3);
    expect(error).toMatchObject({ status: 503, code: 'unavailable', details: { attempts: 3 } });
  });

  it('a Retry-After longer than retryMaxDelayMs goes back to the caller at once instead of being cut short', async () => {
    const server = await serve([problemReply(429, 'rate_limited', {}, { 'retry-after': '120' }), created]);
    const error = await failure(transport(server).createRun({ workflow: 'wf', triggerId: 't' }));
    expect(server.received).toHaveLength(1);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
  });

  it('a server that hangs ends each attempt at timeoutMs; the attempts share the key and the error is `timeout`', async () => {
    const server = await serve(['hang']);
    const started = performance.now();
    const error = await failure(
      transport(server, { timeoutMs: 150, retries: 1 }).createRun({ workflow: 'wf', triggerId: 't' }),
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(server.received).toHaveLength(2);
    expect(new Set(keys(server)).size).toBe(1);
    expect(error).toMatchObject({ status: 0, code: 'timeout', details: { attempts: 2 } });
    expect(error.message).toContain('150 ms');
  });

  it("the caller's signal aborts a request in flight: `aborted`, no retry", async () => {
    const server = await serve(['hang']);
    const controller = new AbortController();
    const pending = failure(
      transport(server, { signal: controller.signal }).createRun({ workflow: 'wf', triggerId: 't' }),
    );
    await server.requests(1);
    controller.abort();
    const error = await pending;
    expect(error).toMatchObject({ status: 0, code: 'aborted' });
    expect(server.received).toHaveLength(1);
  });

  it('no server at all is `network` naming the cause after every retry, never a bare "fetch failed"', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(transport({ url: `http://127.0.0.1:${port}` }, { retries: 2 }).readRun(RUN.runId));
    expect(error).toMatchObject({ status: 0, code: 'network', details: { attempts: 3 } });
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toMatch(/^fetch failed/);
  });
});

describe('HTTP transport options', () => {
  it('a missing runtime key or a base URL that is not absolute is refused when the transport is made', () => {
    // Typed to take process.env's string | undefined: the missing key is refused at once, by name.
    expect(() =>
      httpTransport({ baseUrl: 'http://localhost:3000', runtimeKey: process.env.NO_SUCH_LEDGER_KEY }),
    ).toThrow(/runtimeKey is required \(got undefined\)/);
    for (const baseUrl of ['localhost:3000', '/api', 'ftp://host', undefined as never])
      expect(() => httpTransport({ baseUrl, runtimeKey: 'elk_x' })).toThrow(/baseUrl must be an absolute http/);
  });
});
