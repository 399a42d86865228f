// A real node:http server that misbehaves on purpose, for the HTTP transport's tests: each request
// gets the reply a script picks (drop the connection, hang, or any status, headers and body), and
// every request is recorded with the server's own receive time, so tests measure backoff where it
// happens instead of sleeping.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach } from 'vitest';
import { LedgerApiError } from '@/lib/sdk/index.ts';

export type Reply = 'drop' | 'hang' | { status: number; headers?: Record<string, string>; body?: unknown };

export interface Received {
  /** performance.now() when the request's body had arrived. */
  at: number;
  /** Date.now() at the same moment. */
  wall: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface MisbehavingServer {
  url: string;
  received: Received[];
  /** Resolves once `n` requests have arrived. */
  requests(n: number): Promise<Received[]>;
  stop(): Promise<void>;
}

export const problemReply = (
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Reply => ({
  status,
  headers: { 'content-type': 'application/problem+json', ...headers },
  body: { type: `/api/v1/docs#problem-${code}`, title: code, status, detail: `${code} on purpose`, code, ...extra },
});

export async function startMisbehavingServer(
  script: (request: Received, index: number) => Reply,
): Promise<MisbehavingServer> {
  const received: Received[] = [];
  const waiters: { n: number; resolve: (r: Received[]) => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: Received = {
        at: performance.now(),
        wall: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      for (const w of waiters.filter((w) => received.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve([...received]);
      }
      const reply = script(request, received.length - 1);
      if (reply === 'hang') return;
      if (reply === 'drop') {
        req.socket.destroy();
        return;
      }
      const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    requests: (n) =>
      received.length >= n ? Promise.resolve([...received]) : new Promise((resolve) => waiters.push({ n, resolve })),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** For a test file: `serve(script)` starts a server (the script by request index, or a list whose last
 *  reply repeats); every server is stopped after each test. */
export function useMisbehavingServers() {
  let servers: MisbehavingServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    servers = [];
  });
  return async function serve(
    script: Reply[] | ((index: number, request: Received) => Reply),
  ): Promise<MisbehavingServer> {
    const server = await startMisbehavingServer((request, i) =>
      typeof script === 'function' ? script(i, request) : (script[i] ?? script[script.length - 1]!),
    );
    servers.push(server);
    return server;
  };
}

/** The LedgerApiError a promise rejects with (anything else fails the test). */
export async function ledgerApiError(promise: Promise<unknown>): Promise<LedgerApiError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof LedgerApiError)) throw new Error(`expected a LedgerApiError, got ${String(error)}`);
  return error;
}
