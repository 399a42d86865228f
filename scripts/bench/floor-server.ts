// The floor the agent path is measured against: a bare node:http server with a pg pool doing the least
// an effects ledger must do per effect (one INSERT ... ON CONFLICT DO NOTHING to claim, one UPDATE for
// the raw response, one UPDATE for the outcome; three POSTs), on the same database with fsync on. It
// writes no transition row, audit entry or idempotency record and checks no key, which the product
// must: the goal is half of it, not all. Run as a child process (argv[2] = database URL, argv[3] =
// pool size); prints its URL and stops when stdin closes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS bench_floor_effect (
    key text PRIMARY KEY, epoch int NOT NULL, state text NOT NULL, receipt text,
    response_status int, response_headers jsonb, response_body bytea)`;
const CLAIM = `INSERT INTO bench_floor_effect (key, epoch, state) VALUES ($1, 1, 'pending')
               ON CONFLICT (key) DO NOTHING RETURNING epoch`;
const RESPONSE = `UPDATE bench_floor_effect SET response_status = $2, response_headers = $3::jsonb,
                  response_body = decode($4, 'base64') WHERE key = $1`;
const OUTCOME = `UPDATE bench_floor_effect SET state = $2, receipt = $3 WHERE key = $1 AND state = 'pending'`;

type Body = { key: string; status?: number; headers?: unknown; bodyBase64?: string; state?: string; receipt?: string };

const routes: Record<string, (pool: pg.Pool, b: Body) => Promise<[number, unknown]>> = {
  '/claim': async (pool, b) => {
    const { rows } = await pool.query(CLAIM, [b.key]);
    return rows[0] ? [201, { claimed: true, key: b.key, epoch: 1 }] : [200, { claimed: false, key: b.key }];
  },
  '/response': async (pool, b) => {
    await pool.query(RESPONSE, [b.key, b.status, JSON.stringify(b.headers), b.bodyBase64]);
    return [201, { key: b.key }];
  },
  '/outcome': async (pool, b) => {
    await pool.query(OUTCOME, [b.key, b.state, b.receipt ?? null]);
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
