// The database goes away under a small mixed load of the agent API through PgBouncer (the shipped
// deploy/pgbouncer.ini): PostgreSQL stopped (connections closed, new ones refused), PostgreSQL
// frozen (connections open, nothing answers: a paused server or a partition) and PgBouncer itself
// stopped and started again. Every answer is either a success or a 503 with Retry-After, none comes
// later than 10 s, /readyz says not ready while it lasts, every claim answered 201 is in the ledger,
// and the same process serves again once the database is back, without a restart.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { POST as claimPOST } from '@/app/api/v1/effects/claim/route.ts';
import { GET as readyzGET } from '@/app/readyz/route.ts';
import { setDb } from '@/lib/api/db.ts';
import { createDb, type Db } from '@/lib/db/client.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool } from '../helpers/factories.ts';
import { startFaultProxy, type FaultProxy, type ProxyMode } from '../helpers/fault-proxy.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { get, makeKey } from './api-support.ts';

const t = await createTestDatabase({ poolSize: 4 });
let proxy: FaultProxy;
let bouncer: PgBouncer | undefined;
let bouncerPort: number;
let pooled: Db;
let token: string;
let claimBase: { runId: string; tool: string; action: string };
let readKey: string;
const logins = { [inject('appUser')]: inject('appPassword') };

interface Answer {
  kind: 'claim' | 'read' | 'ready';
  status: number;
  ms: number;
  retryAfter: string | null;
  key?: string;
}

beforeAll(async () => {
  const server = new URL(inject('ownerUrl'));
  proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port) });
  bouncer = await startPgBouncer({ host: '127.0.0.1', port: proxy.port }, logins);
  bouncerPort = bouncer.port;
  // The web process's own deadlines (lib/env.ts defaults): a 3 s pool timeout and a 6 s statement deadline.
  pooled = createDb(bouncer.through(t.appUrl), 20, { queryTimeoutMs: 6_000 });
  setDb(pooled);
  token = (await makeKey(t.db)).token;
  const run = await makeRun(t.db);
  claimBase = { runId: run.runId, tool: (await makeTool(t.db)).name, action: 'campaign_welcome' };
  const first = await claim();
  expect(first.status).toBe(201);
  readKey = first.key!;
});

afterAll(async () => {
  setDb(undefined);
  await pooled?.$disconnect();
  await bouncer?.stop();
  await proxy?.close();
});

let n = 0;
async function timed(kind: Answer['kind'], call: () => Promise<Response>): Promise<Answer> {
  const started = performance.now();
  const res = await call();
  const body = (await res.json().catch(() => ({}))) as { key?: string };
  return {
    kind,
    status: res.status,
    ms: performance.now() - started,
    retryAfter: res.headers.get('retry-after'),
    key: body.key,
  };
}

function claim(): Promise<Answer> {
  const recordId = `c-${n++}`;
  const body = JSON.stringify({ ...claimBase, recordId, target: `${recordId}@example.com` });
  return timed('claim', () =>
    claimPOST(
      new Request('http://x/api/v1/effects/claim', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body,
      }),
    ),
  );
}
const read = () => timed('read', () => get(`/effects/${encodeURIComponent(readKey)}`, token));
const ready = () => timed('ready', () => readyzGET());

/** Runs `loops` callers, each sending claims, reads and probes one after the other, until `stop`. */
async function load(loops: number, stop: Promise<void>): Promise<Answer[]> {
  let done = false;
  void stop.then(() => (done = true));
  const answers: Answer[] = [];
  await Promise.all(
    Array.from({ length: loops }, async (_, i) => {
      const calls = [claim, read, ready];
      for (let j = i; !done; j++) answers.push(await calls[j % calls.length]!());
    }),
  );
  return answers;
}

/** Holds the fault for `ms` under load, then clears it and waits until a claim succeeds again. */
async function outage(start: () => Promise<void> | void, end: () => Promise<void> | void, ms: number) {
  const stop = (async () => {
    await start();
    await new Promise((resolve) => setTimeout(resolve, ms));
    await end();
  })();
  const during = await load(4, stop);
  const cleared = performance.now();
  let recovered: Answer;
  do recovered = await claim();
  while (recovered.status !== 201 && performance.now() - cleared < 20_000);
  return { during, recoveredAfterMs: performance.now() - cleared, recovered };
}

function expectNoErrors(answers: Answer[]) {
  expect(answers.length).toBeGreaterThan(0);
  expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
  expect(answers.filter((a) => a.ms > 10_000)).toEqual([]);
  for (const a of answers.filter((x) => x.status === 503)) expect(a.retryAfter).toMatch(/^\d+$/);
  expect(answers.filter((a) => a.kind === 'ready' && a.status === 503).length).toBeGreaterThan(0);
  expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
}

async function expectClaimsKept(answers: Answer[]) {
  const won = answers.filter((a) => a.kind === 'claim' && a.status === 201).map((a) => a.key!);
  const rows = await t.owner<{ n: number }>(`SELECT count(*)::int AS n FROM effect WHERE key = ANY ($1)`, [won]);
  expect(rows.rows[0]!.n).toBe(won.length);
}

const mode = (m: ProxyMode) => () => proxy.set(m);

describe('the database goes away under load through PgBouncer', () => {
  it(
    'PostgreSQL stopped: 503 with Retry-After, never 500, none over 10 s; back without a restart',
    { timeout: 60_000 },
    async () => {
      // Longer than PgBouncer's query_wait_timeout (5 s), which holds waiting clients until then.
      const r = await outage(mode('down'), mode('open'), 7_000);
      expectNoErrors(r.during);
      await expectClaimsKept(r.during);
      expect(r.recovered.status).toBe(201);
      expect(r.recoveredAfterMs).toBeLessThan(10_000);
    },
  );

  it(
    'PostgreSQL frozen (connections open, no answer): every request answered within 10 s; back when it thaws',
    { timeout: 60_000 },
    async () => {
      const r = await outage(mode('frozen'), mode('open'), 8_000);
      expectNoErrors(r.during);
      await expectClaimsKept(r.during);
      expect(r.recovered.status).toBe(201);
      expect(r.recoveredAfterMs).toBeLessThan(10_000);
      expect((await read()).status).toBe(200);
      expect((await ready()).status).toBe(200);
    },
  );

  it(
    'PgBouncer stopped and started again: 503 meanwhile, never 500; the pool reconnects',
    { timeout: 60_000 },
    async () => {
      const r = await outage(
        async () => {
          await bouncer!.stop();
          bouncer = undefined;
        },
        async () => {
          bouncer = await startPgBouncer({ host: '127.0.0.1', port: proxy.port }, logins, { port: bouncerPort });
        },
        3_000,
      );
      expectNoErrors(r.during);
      await expectClaimsKept(r.during);
      expect(r.recovered.status).toBe(201);
    },
  );
});
