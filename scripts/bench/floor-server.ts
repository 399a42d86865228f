// The floor the agent path is measured against: a bare node:http server with a pg pool doing the least
// an effects ledger must do per effect, in two POSTs as the SDK makes them: a claim (one INSERT ... ON
// CONFLICT DO NOTHING) and an outcome carrying the raw response (one UPDATE of the response, the state
// and the receipt), on the same database with fsync on. It writes no transition row, audit entry or
// idempotency record and checks no key, which the product must: the goal is half of it, not all. Run
// as a child process (argv[2] = database URL, argv[3] = pool size); prints its URL and stops when
// stdin closes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS bench_floor_effect (
    key text PRIMARY KEY, epoch int NOT NULL, state text NOT NULL, receipt text,
    response_status int, response_headers jsonb, response_body bytea)`;
const CLAIM = `INSERT INTO bench_floor_effect (key, epoch, state) VALUES ($1, 1, 'pending')
               ON CONFLICT (key) DO NOTHING RETURNING epoch`;
const OUTCOME = `UPDATE bench_floor_effect SET state = $2, receipt = $3, response_status = $4,
                   response_headers = $5::jsonb, response_body = decode($6, 'base64')
                 WHERE key = $1 AND state = 'pending'`;

type Body = { key: string; state?: string; receipt?: string; response?: RawWire };
type RawWire = { status: number; headers: [string, string][]; bodyBase64: string };

const routes: Record<string, (pool: pg.Pool, b: Body) => Promise<[number, unknown]>> = {
  '/claim': async (pool, b) => {
    const { rows } = await pool.query(CLAIM, [b.key]);
    return rows[0] ? [201, { claimed: true, key: b.key, epoch: 1 }] : [200, { claimed: false, key: b.key }];
  },
  '/outcome': async (pool, b) => {
    const r = b.response;
    await pool.query(OUTCOME, [
      b.key,
      b.state,
      b.receipt ?? null,
      r?.status ?? null,
      r ? JSON.stringify(r.headers) : null,
      r?.bodyBase64 ?? null,
    ]);
    return [200, { key: b.key, state: b.state }];
  },
};

const pool = new pg.Pool({ connectionString: process.argv[2], max: Number(process.argv[3] ?? 16) });
await pool.query(SCHEMA);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const route = routes[req.url ?? ''];
    if (req.method !== 'POST' || !route) {
      res.writeHead(404).end();
      return;
    }
    route(pool, JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body)
      .then(([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(error) }));
      });
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close();
  void pool.end().then(() => process.exit(0));
});
