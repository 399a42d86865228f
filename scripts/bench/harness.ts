// Shared benchmark plumbing: a throwaway embedded PostgreSQL with fsync ON (durability as in
// production), migrated, with the app role; and a closed-loop load generator.
import pg from 'pg';
import { ensureAppLogin, withCredentials } from '@/lib/db/roles.ts';
import { startThrowawayDatabase } from '@/lib/db/scratch.ts';
import { applyMigrations } from '@/lib/db/schema-engine.ts';

export interface BenchDatabase {
  ownerUrl: string;
  appUrl: string;
  stop(): Promise<void>;
}

export async function startBenchDatabase(): Promise<BenchDatabase> {
  const external = process.env.MIGRATION_DATABASE_URL;
  if (external) {
    const name = `bench_${Date.now()}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(external);
    u.pathname = `/${name}`;
    await applyMigrations(u.toString());
    await ensureAppLogin(u.toString(), 'ledger_app_bench', 'ledger-app-bench');
    return {
      ownerUrl: u.toString(),
      appUrl: withCredentials(u.toString(), 'ledger_app_bench', 'ledger-app-bench'),
      stop: async () => {
        const c = new pg.Client({ connectionString: external });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const database = await startThrowawayDatabase({ name: 'bench', appUser: 'ledger_app_bench', fsync: true });
  return { ownerUrl: database.ownerUrl, appUrl: database.appUrl, stop: database.stop };
}

/** Another migrated database on the same server (its own tables, same PostgreSQL): for a section
 *  whose figures must not see the rows other sections wrote (the audit trail's verification sizes). */
export async function createSiblingDatabase(db: BenchDatabase, name: string): Promise<BenchDatabase> {
  const admin = new pg.Client({ connectionString: db.ownerUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  await admin.end();
  const ownerUrl = new URL(db.ownerUrl);
  ownerUrl.pathname = `/${name}`;
  const appUrl = new URL(db.appUrl);
  appUrl.pathname = `/${name}`;
  await applyMigrations(ownerUrl.toString());
  // The app login role is cluster-wide and already exists; the migrations granted its group here.
  return {
    ownerUrl: ownerUrl.toString(),
    appUrl: appUrl.toString(),
    stop: async () => {
      const c = new pg.Client({ connectionString: db.ownerUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
      await c.end();
    },
  };
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `fn` once to warm caches, then `repeat` times serially; p50 / p95 in ms. */
export async function timeRepeat(repeat: number, fn: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

export interface LoadResult {
  ops: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  /** Every op's latency in ms, ascending. */
  samples: Float64Array;
}

/** Runs `op(i)` for i in [0, total) on `concurrency` closed-loop workers; latency per op. */
export async function closedLoop(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<unknown>,
): Promise<LoadResult> {
  const latencies = new Float64Array(total);
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = process.hrtime.bigint();
        await op(i);
        latencies[i] = Number(process.hrtime.bigint() - t0) / 1e6;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return loadResult(total, seconds, latencies);
}

function loadResult(ops: number, seconds: number, latencies: Float64Array): LoadResult {
  const samples = latencies.sort();
  return {
    ops,
    seconds,
    perSecond: ops / seconds,
    p50ms: percentile(samples, 50),
    p99ms: percentile(samples, 99),
    samples,
  };
}

/** Several closed-loop rounds of one path as one result: ops and time summed, latencies pooled. */
export function mergeLoads(rounds: LoadResult[]): LoadResult {
  const all = new Float64Array(rounds.reduce((n, r) => n + r.samples.length, 0));
  let at = 0;
  for (const r of rounds) {
    all.set(r.samples, at);
    at += r.samples.length;
  }
  return loadResult(
    rounds.reduce((n, r) => n + r.ops, 0),
    rounds.reduce((s, r) => s + r.seconds, 0),
    all,
  );
}

/**
 * Runs several paths over the same work in alternating rounds (a, b, c, a, b, c, ...) so that
 * whatever else the machine does at the time weighs on each path alike; on a small shared VM
 * back-to-back runs of one path at a time moved the ratios by a third. `op(path, i)` gets indexes
 * in [0, total) per path; each round covers a contiguous slice of them.
 */
export async function alternatingRounds<P extends string>(
  paths: readonly P[],
  total: number,
  rounds: number,
  concurrency: number,
  op: (path: P, i: number) => Promise<unknown>,
): Promise<Record<P, LoadResult>> {
  const perPath = new Map<P, LoadResult[]>(paths.map((p) => [p, []]));
  const size = Math.ceil(total / rounds);
  for (let r = 0; r < rounds; r++) {
    const from = r * size;
    const count = Math.min(size, total - from);
    if (count <= 0) break;
    for (const path of paths) perPath.get(path)!.push(await closedLoop(count, concurrency, (i) => op(path, from + i)));
  }
  return Object.fromEntries(paths.map((p) => [p, mergeLoads(perPath.get(p)!)])) as Record<P, LoadResult>;
}

export function progress(label: string): (done: number, total: number) => void {
  let last = -1;
  return (done, total) => {
    const pctDone = Math.floor((done / total) * 10);
    if (pctDone !== last) {
      last = pctDone;
      console.log(`[bench] ${label}: ${done}/${total}`);
    }
  };
}
