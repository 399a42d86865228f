// A worker's own probes and metrics on WORKER_HTTP_PORT (workers serve no other HTTP):
//  GET /healthz  200 while the process runs,
//  GET /readyz   200 while its heartbeat is fresh: its leader connection (lib/ops/leader.ts) reached
//                PostgreSQL within the last staleMs (default STALE_MS), whether it leads or follows;
//                else 503,
//  GET /metrics  Prometheus text of this process (its database pool, process metrics, replays); 500
//                when the scrape fails.
// The clock and the threshold are options so a test can age the heartbeat without waiting for it.
import { createServer, type Server } from 'node:http';
import { exposition } from '@/lib/ops/metrics.ts';

export const STALE_MS = 15_000;

export interface WorkerHttpOptions {
  /** When the worker last heard from PostgreSQL (ms since epoch; 0: never). */
  heartbeat: () => number;
  token?: string;
  staleMs?: number;
  now?: () => number;
  /** Where a failed scrape is reported (the worker's log). */
  log?: (line: string) => void;
}

export function startWorkerHttp(port: number, options: WorkerHttpOptions): Promise<Server> {
  const { heartbeat, token, staleMs = STALE_MS, now = Date.now, log = () => undefined } = options;
  const server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const path = req.url?.split('?')[0];
    if (req.method !== 'GET')
      return send(405, 'application/problem+json', JSON.stringify({ status: 405, title: 'Method not allowed' }));
    if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      const age = now() - heartbeat();
      if (age <= staleMs)
        return send(200, 'application/json', JSON.stringify({ status: 'ready', heartbeatAgeMs: age }));
      const detail = `no contact with the database for ${Math.round(age / 1000)} s (stale after ${staleMs / 1000} s)`;
      return send(
        503,
        'application/problem+json',
        JSON.stringify({ status: 503, code: 'unavailable', title: 'Service unavailable', detail }),
      );
    }
    if (path === '/metrics') {
      if (token && req.headers.authorization !== `Bearer ${token}`)
        return send(
          401,
          'application/problem+json',
          JSON.stringify({ status: 401, code: 'unauthenticated', title: 'Not authenticated' }),
        );
      // A failed scrape is answered 500 and logged: unanswered, its rejection would end the worker.
      exposition().then(
        ({ body, contentType }) => send(200, contentType, body),
        (error: unknown) => {
          log(`metrics scrape failed: ${error instanceof Error ? error.message : String(error)}`);
          send(
            500,
            'application/problem+json',
            JSON.stringify({ status: 500, code: 'internal', title: 'Internal error', detail: 'metrics unavailable' }),
          );
        },
      );
      return;
    }
    send(404, 'application/problem+json', JSON.stringify({ status: 404, code: 'not_found', title: 'Not found' }));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve(server));
  });
}
