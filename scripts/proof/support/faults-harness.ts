// Shared set-up of the fault proofs (crash matrix, provider faults): a proof database with the app
// role's client and an owner pool, the agent API served over a real socket from the route modules
// (the same in-process dispatcher the API tests use), and small read helpers over the ledger tables.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createDb, type Db } from '@/lib/db/client.ts';
import { setDb } from '@/lib/api/db.ts';
import { BASE, routeFetch } from '@/tests/integration/api-support.ts';
import type { ProofContext } from '../section.ts';

export interface FaultDb {
  db: Db;
  appUrl: string;
  ownerUrl: string;
  owner: pg.Pool;
  close(): Promise<void>;
}

export async function openFaultDb(ctx: ProofContext, poolSize = 10): Promise<FaultDb> {
  const { appUrl, ownerUrl } = await ctx.newDatabase();
  const db = createDb(appUrl, poolSize);
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 3 });
  return {
    db,
    appUrl,
    ownerUrl,
    owner,
    async close() {
      await db.$disconnect();
      await owner.end();
    },
  };
}

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/** The agent API (app/api/v1 route handlers) on a real socket, backed by `db` (the API's db seam). */
export async function startApiServer(db: Db): Promise<ApiServer> {
  setDb(db);
  const server = http.createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string') headers.set(k, v);
        else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const response = await routeFetch(`${BASE}${req.url ?? '/'}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
      });
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => (out[name] = value));
      const body = Buffer.from(await response.arrayBuffer());
      res.writeHead(response.status, out).end(body);
    } catch (error) {
      // The client may be dead (killed mid-request): nothing to answer to.
      if (!res.headersSent && !res.destroyed)
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 'internal', message: String(error) } }));
    }
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      setDb(undefined);
    },
  };
}

export interface KeyState {
  target: string;
  key: string;
  /** 'none' when no effect row exists for the key (never claimed). */
  state: string;
  epoch: number | null;
  receipt: string | null;
  /** An effect_key row without any effect row: a claim with no state (lost). */
  orphan: boolean;
}

/** The current state of each target's key in one run, read as the owner (nothing the app may not see). */
export async function statesByTarget(owner: pg.Pool, runId: string): Promise<Map<string, KeyState>> {
  const r = await owner.query<{
    target: string;
    key: string;
    state: string | null;
    epoch: number | null;
    receipt: string | null;
  }>(
    `SELECT k.target, k.key, e.state::text AS state, e.epoch, e.receipt
       FROM effect_key k LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
      WHERE k.run_id = $1`,
    [runId],
  );
  const out = new Map<string, KeyState>();
  for (const row of r.rows)
    out.set(row.target, {
      target: row.target,
      key: row.key,
      state: row.state ?? 'none',
      epoch: row.epoch,
      receipt: row.receipt,
      orphan: row.state === null,
    });
  return out;
}

export function countBy<T>(items: Iterable<T>, f: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of items) out[f(x)] = (out[f(x)] ?? 0) + 1;
  return out;
}

export const fmtCounts = (c: Record<string, number>) =>
  Object.entries(c)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

/** Polls a condition with a deadline (the replay tests' helper). */
export { until } from '@/tests/integration/replay-fixtures.ts';

/** Moves every held pending claim's lease into the past (the reconciler's clock, injected: no waiting). */
export async function expireLeases(owner: pg.Pool, runId: string): Promise<number> {
  const r = await owner.query(
    `UPDATE effect SET lease_expires_at = now() - interval '1 second' WHERE run_id = $1 AND state = 'pending' AND NOT awaiting_claim`,
    [runId],
  );
  return r.rowCount ?? 0;
}
