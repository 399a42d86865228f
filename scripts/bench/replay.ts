// Forced replay benchmark (issues 5 and 7): N pending targets replayed against the sandbox provider by
// the worker as its own process (scripts/worker.ts), at three sizes 10x apart (default 1,000 / 10,000
// / 100,000), compared with the raw claim ceiling measured in the same run (one-row INSERT ... ON
// CONFLICT DO NOTHING RETURNING, 16 connections), with the worker's peak memory (VmHWM from /proc,
// sampled VmRSS as a cross-check) per size and a verdict on whether it stays flat from 10,000 to
// 100,000. Then scale-out: the middle size again with 4 worker processes instead of 1 (instant
// provider: on 2 cores the CPU is the limit, so this pair shows the overhead of more processes), and
// a second pair, 1 worker vs 4 on a smaller replay, with the sandbox answering every send after a
// fixed latency as real providers do (BENCH_REPLAY_LATENCY_MS, default 200 ms; BENCH_REPLAY_LATENCY_SIZE,
// default 1,600 targets; BENCH_REPLAY_LATENCY_CONCURRENCY handlers per worker, default 1, i.e. 8 sends
// in flight per worker): there the provider is the limit and more workers add throughput.
// Every run checks what it measured: one delivery per target at the sandbox, no duplicate, and no
// claim lost to another handler (the replay's skipped count is 0: the chunks are disjoint).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createDb, type Db } from '@/lib/db/client.ts';
import { approvePlan, submitPlan } from '@/lib/ledger/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { getReplayProgress, installJobEngine, requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { closedLoop } from './harness.ts';
import { WORKER_NODE_ARGS } from '../support/worker-args.ts';

const root = path.resolve(import.meta.dirname, '../..');
export const DEFAULT_REPLAY_SIZES = [1_000, 10_000, 100_000];
/** Memory counts as flat when the 100k peak is within this factor of the 10k peak (and under 400 MB). */
const FLAT_FACTOR = 1.15;

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/** The PostgreSQL server's processes (postmaster and its children) as of now. */
function serverPids(postmaster: number): number[] {
  if (!postmaster) return [];
  const pids = [postmaster];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === postmaster) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function memoryKb(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

const system = { kind: 'system' as const, id: 'bench', label: 'bench' };
const operator = {
  kind: 'user' as const,
  id: '00000000-0000-4000-8000-000000000001',
  label: 'bench operator',
  role: 'operator' as const,
};

/** A run of `size` approved targets, none sent yet, and its replay requested (not started). */
export async function prepareReplay(db: Db, size: number, label: string): Promise<string> {
  const stamp = `${label}_${size}_${Date.now()}`;
  const tool = await db.toolDefinition.create({
    data: {
      name: `bench_replay_${stamp}`,
      actions: ['notify'],
      targetType: 'email',
      provider: 'sandbox',
      generatedInputs: ['subject', 'body'],
      fourEyesReplay: false,
      supportsReceiptLookup: true,
      supportsIdempotencyKey: true,
    },
  });
  const event = await db.event.create({ data: { triggerId: `bench-replay-${stamp}`, workflow: 'bench' } });
  const run = await db.run.create({
    data: { workflow: 'bench', eventId: event.id, createdByKind: 'system', createdBy: 'bench' },
  });
  const items = Array.from({ length: size }, (_, i) => ({
    tool: tool.name,
    action: 'notify',
    recordId: `r-${i}`,
    target: `user${i}@${label}.bench.example.com`,
  }));
  const plan = await submitPlan({ db, actor: system }, { runId: run.id, items });
  await approvePlan({ db, actor: operator }, { planId: plan.planId, itemsHash: plan.itemsHash });
  const req = await requestReplay({ db, actor: operator }, { runId: run.id, confirmCount: size, reason: 'bench' });
  return req.replayId;
}

export interface ReplayRunResult {
  sendsPerSecond: number;
  seconds: number;
  /** Highest VmHWM (or sampled VmRSS) of any worker process, MB. */
  peakMb: number;
  delivered: number;
  duplicates: number;
  /** Worker CPU time per send (all workers), ms: what the machine's load does not change much. */
  cpuMsPerSend: number;
  /** PostgreSQL CPU time per send (server processes alive at the end), ms. */
  dbCpuMsPerSend: number;
  /** This process's CPU per send (the sandbox provider, progress polling), ms. */
  benchCpuMsPerSend: number;
  /** Items of the replay not 'sent' (skipped after a lost claim, failed, unknown, interrupted): 0 when
   *  every target went out once through its own handler and no handler took another's item. */
  skipped: number;
}

/** Starts `workers` worker processes, runs one prepared replay to completion, stops them. */
async function runReplay(o: {
  postmaster: number;
  db: Db;
  appUrl: string;
  sandbox: Sandbox;
  sender: Awaited<ReturnType<typeof startBoss>>;
  replayId: string;
  size: number;
  workers: number;
  concurrency: number;
  domain: string;
}): Promise<ReplayRunResult> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.MIGRATION_DATABASE_URL;
  Object.assign(env, {
    DATABASE_URL: o.appUrl,
    REPLAY_CONCURRENCY: String(o.concurrency),
    RECONCILE_INTERVAL_SECONDS: '30',
    LEDGER_PROVIDERS: JSON.stringify({ sandbox: { type: 'sandbox', url: o.sandbox.url } }),
  });
  // The workers start as npm start starts them (WORKER_NODE_ARGS); BENCH_WORKER_NODE_ARGS adds flags
  // (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the workers).
  const nodeArgs = [...WORKER_NODE_ARGS, ...(process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let w = 0; w < o.workers; w++) {
    const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'scripts/worker.ts'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    ready.push(
      new Promise((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          if (out.length < 10_000) out += d.toString();
          if (process.env.BENCH_REPLAY_WORKER_LOG === '1') process.stderr.write(d);
          if (/ ready: /.test(out)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it was ready`)));
      }),
    );
  }
  const peak = new Map<number, number>();
  const sample = () => {
    for (const c of children)
      if (c.pid && c.exitCode === null) peak.set(c.pid, Math.max(peak.get(c.pid) ?? 0, memoryKb(c.pid).rss));
  };
  const sampler = setInterval(sample, 200);
  // BENCH_REPLAY_WAITS=1: what the database's sessions are doing, sampled every 100 ms (evidence for
  // where the time goes: CPU, lock waits, client round trips), printed at the end of the run.
  const waits = new Map<string, number>();
  let waitSampling = false;
  const waitSampler =
    process.env.BENCH_REPLAY_WAITS === '1'
      ? setInterval(() => {
          if (waitSampling) return;
          waitSampling = true;
          o.db
            .$queryRawUnsafe<{ w: string; n: bigint }[]>(
              `SELECT coalesce(application_name, '') || ' ' || state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'CPU') AS w, count(*) AS n
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' GROUP BY 1`,
            )
            .then(
              (rows) => {
                for (const r of rows) waits.set(r.w, (waits.get(r.w) ?? 0) + Number(r.n));
              },
              () => undefined,
            )
            .finally(() => (waitSampling = false));
        }, 100)
      : undefined;
  try {
    // Timing starts when every worker is up: start-up (tsx, Prisma) is not part of the send rate.
    await Promise.all(ready);
    const delivered0 = o.sandbox.deliveries.length;
    const cpu0 = children.reduce((a, c) => a + cpuSeconds(c.pid!), 0);
    const db0 = new Map(serverPids(o.postmaster).map((pid) => [pid, cpuSeconds(pid)]));
    const bench0 = process.cpuUsage();
    const t0 = Date.now();
    let skipped = 0;
    await startReplay({ db: o.db, actor: operator, jobs: o.sender }, { replayId: o.replayId });
    let lastLog = 0;
    for (;;) {
      const p = await getReplayProgress({ db: o.db }, { replayId: o.replayId });
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        console.log(`[bench] replay ${o.size} x${o.workers} workers: ${p.sent}/${p.total} sent`);
      }
      if (p.status === 'completed') {
        skipped = p.skipped + p.failed + p.unknown + (p.total - p.sent - p.skipped - p.failed - p.unknown);
        break;
      }
      const dead = children.find((c) => c.exitCode !== null);
      if (dead) throw new Error(`worker exited with ${dead.exitCode}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = (Date.now() - t0) / 1000;
    const cpu = children.reduce((a, c) => a + cpuSeconds(c.pid!), 0) - cpu0;
    const dbCpu = serverPids(o.postmaster).reduce((a, pid) => a + cpuSeconds(pid) - (db0.get(pid) ?? 0), 0);
    const benchUsage = process.cpuUsage(bench0);
    const benchCpu = (benchUsage.user + benchUsage.system) / 1e6;
    for (const c of children)
      if (c.pid) peak.set(c.pid, Math.max(peak.get(c.pid) ?? 0, memoryKb(c.pid).hwm, memoryKb(c.pid).rss));
    const mine = o.sandbox.deliveries.slice(delivered0).filter((d) => d.to.endsWith(`@${o.domain}.bench.example.com`));
    const distinct = new Set(mine.map((d) => d.to)).size;
    return {
      sendsPerSecond: o.size / seconds,
      seconds,
      peakMb: Math.max(0, ...peak.values()) / 1024,
      delivered: distinct,
      duplicates: mine.length - distinct,
      cpuMsPerSend: (cpu * 1000) / o.size,
      dbCpuMsPerSend: (dbCpu * 1000) / o.size,
      benchCpuMsPerSend: (benchCpu * 1000) / o.size,
      skipped,
    };
  } finally {
    clearInterval(sampler);
    if (waitSampler) {
      clearInterval(waitSampler);
      const total = [...waits.values()].reduce((a, b) => a + b, 0) || 1;
      console.log(
        `[bench] sessions of the replay ${o.size} x${o.workers} (share of samples): ${[...waits]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 12)
          .map(([k, v]) => `${k} ${((100 * v) / total).toFixed(1)}%`)
          .join(', ')}`,
      );
    }
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }),
    );
  }
}

/** Throws unless every target got exactly one delivery and no claim was lost. */
function check(r: ReplayRunResult, size: number, what: string) {
  if (r.delivered !== size || r.duplicates !== 0 || r.skipped !== 0)
    throw new Error(
      `replay of ${what}: ${r.delivered} of ${size} targets delivered, ${r.duplicates} duplicates, ${r.skipped} skipped`,
    );
}

export async function benchReplay(opts: {
  ownerUrl: string;
  appUrl: string;
  sizes?: number[];
  concurrency?: number;
  scaleOutWorkers?: number;
  latencyMs?: number;
  latencySize?: number;
}): Promise<Record<string, number>> {
  const sizes = opts.sizes?.length ? opts.sizes : DEFAULT_REPLAY_SIZES;
  const concurrency = opts.concurrency ?? 4;
  const figures: Record<string, number> = {};
  await installJobEngine(opts.ownerUrl);
  const owner = new pg.Pool({ connectionString: opts.ownerUrl, max: 16 });
  const db = createDb(opts.appUrl, 20);
  const sandbox = await startSandbox();
  const sender = await startBoss(opts.appUrl);
  // The server's postmaster: parent of any backend.
  // (0 when the server runs elsewhere: no database CPU figure then).
  const {
    rows: [backend],
  } = await owner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(`/proc/${backend!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  } catch {
    postmaster = 0;
  }
  try {
    // The physical ceiling, same server, same run.
    await owner.query('CREATE TABLE IF NOT EXISTS bench_replay_raw (LIKE effect INCLUDING ALL)');
    const rawRun = await db.run.create({
      data: {
        workflow: 'bench',
        eventId: (await db.event.create({ data: { triggerId: `bench-raw-${Date.now()}`, workflow: 'bench' } })).id,
        createdByKind: 'system',
        createdBy: 'bench',
      },
    });
    const raw = await closedLoop(20_000, 16, (i) =>
      owner.query(
        'INSERT INTO bench_replay_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by) VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key, epoch) DO NOTHING RETURNING id',
        [`raw-${Date.now()}-${i}`, 'pending', rawRun.id, `idem-${i}`, 'executor', 'bench'],
      ),
    );
    figures['raw claim ceiling (rows/s)'] = raw.perSecond;
    console.log(`[bench] replay: raw ceiling ${raw.perSecond.toFixed(0)} rows/s`);

    const peaks = new Map<number, number>();
    const rates = new Map<number, number>();
    for (const [n, size] of sizes.entries()) {
      const domain = `s${n}`;
      const replayId = await prepareReplay(db, size, domain);
      const r = await runReplay({
        postmaster,
        db,
        appUrl: opts.appUrl,
        sandbox,
        sender,
        replayId,
        size,
        workers: 1,
        concurrency,
        domain,
      });
      check(r, size, `${size}`);
      peaks.set(size, r.peakMb);
      rates.set(size, r.sendsPerSecond);
      figures[`replay ${size}: sends/s (1 worker)`] = r.sendsPerSecond;
      figures[`replay ${size}: sends/s / raw claim ceiling`] = r.sendsPerSecond / raw.perSecond;
      figures[`replay ${size}: worker peak memory (MB, VmHWM)`] = r.peakMb;
      figures[`replay ${size}: worker CPU per send (ms)`] = r.cpuMsPerSend;
      figures[`replay ${size}: PostgreSQL CPU per send (ms)`] = r.dbCpuMsPerSend;
      // What 2 idle cores would allow with this much CPU per send (worker + database + the sandbox
      // and this process): the figure a loaded machine cannot show directly.
      figures[`replay ${size}: sends/s 2 idle cores allow (2000 / CPU ms per send)`] =
        2000 / (r.cpuMsPerSend + r.dbCpuMsPerSend + r.benchCpuMsPerSend);
      console.log(
        `[bench] replay ${size}: ${r.sendsPerSecond.toFixed(0)} sends/s in ${r.seconds.toFixed(0)} s (${(r.sendsPerSecond / raw.perSecond).toFixed(3)} of raw), worker peak ${r.peakMb.toFixed(0)} MB, CPU per send: worker ${r.cpuMsPerSend.toFixed(2)} ms, PostgreSQL ${r.dbCpuMsPerSend.toFixed(2)} ms, sandbox + bench ${r.benchCpuMsPerSend.toFixed(2)} ms (2 idle cores: ~${(2000 / (r.cpuMsPerSend + r.dbCpuMsPerSend + r.benchCpuMsPerSend)).toFixed(0)} sends/s)`,
      );
    }
    // Verdict: flat from the 10x-smaller size to the largest one.
    const sorted = [...sizes].sort((a, b) => a - b);
    const big = sorted[sorted.length - 1]!;
    const mid = sorted.length > 1 ? sorted[sorted.length - 2]! : big;
    if (big !== mid) {
      const ratio = peaks.get(big)! / peaks.get(mid)!;
      const flat = ratio <= FLAT_FACTOR && Math.max(...peaks.values()) < 400;
      figures[`memory flat: ${flat ? 'yes' : 'no'} (peak ratio ${big}/${mid}, under 400 MB, within ${FLAT_FACTOR}x)`] =
        ratio;
      console.log(
        `[bench] memory flat: ${flat ? 'yes' : 'no'} (ratio ${big}/${mid} ${ratio.toFixed(2)}, peaks ${[...peaks].map(([s, m]) => `${s}: ${m.toFixed(0)} MB`).join(', ')})`,
      );
    }

    // Scale-out (issue 7): the middle size with N worker processes sharing the chunks.
    const workers = opts.scaleOutWorkers ?? Number(process.env.BENCH_REPLAY_WORKERS ?? 4);
    if (workers > 1) {
      const domain = 'scale';
      const replayId = await prepareReplay(db, mid, domain);
      const r = await runReplay({
        postmaster,
        db,
        appUrl: opts.appUrl,
        sandbox,
        sender,
        replayId,
        size: mid,
        workers,
        concurrency,
        domain,
      });
      check(r, mid, `${mid} with ${workers} workers`);
      figures[`replay ${mid}: sends/s (${workers} workers)`] = r.sendsPerSecond;
      figures[`replay ${mid}: ${workers} workers / 1 worker`] = r.sendsPerSecond / rates.get(mid)!;
      figures[`replay ${mid}: peak memory per worker, ${workers} workers (MB)`] = r.peakMb;
      figures[`replay ${mid}: claims lost to another worker (${workers} workers)`] = r.skipped;
      console.log(
        `[bench] replay ${mid} with ${workers} workers: ${r.sendsPerSecond.toFixed(0)} sends/s (${(r.sendsPerSecond / rates.get(mid)!).toFixed(2)}x of 1 worker), 0 duplicates, 0 claims lost; CPU per send: worker ${r.cpuMsPerSend.toFixed(2)} ms, PostgreSQL ${r.dbCpuMsPerSend.toFixed(2)} ms, sandbox + bench ${r.benchCpuMsPerSend.toFixed(2)} ms`,
      );

      // The same pair with a provider that takes `latencyMs` per send: bound by the provider, not the CPU.
      const latencyMs = opts.latencyMs ?? Number(process.env.BENCH_REPLAY_LATENCY_MS ?? 200);
      const latencySize = opts.latencySize ?? Number(process.env.BENCH_REPLAY_LATENCY_SIZE ?? Math.min(1_600, mid));
      // One handler (8 sends in flight) per worker: 4 such workers stay within what 2 shared cores
      // can do, so the pair shows the provider as the limit rather than the machine.
      const latencyConcurrency = Number(process.env.BENCH_REPLAY_LATENCY_CONCURRENCY ?? 1);
      if (latencyMs > 0 && latencySize > 0) {
        const label = `replay ${latencySize}, provider ${latencyMs} ms, ${latencyConcurrency} handler${latencyConcurrency > 1 ? 's' : ''} per worker`;
        sandbox.setLatency(latencyMs);
        try {
          const rate = new Map<number, number>();
          for (const n of [1, workers]) {
            const d = `lat${n}`;
            const id = await prepareReplay(db, latencySize, d);
            const lr = await runReplay({
              postmaster,
              db,
              appUrl: opts.appUrl,
              sandbox,
              sender,
              replayId: id,
              size: latencySize,
              workers: n,
              concurrency: latencyConcurrency,
              domain: d,
            });
            check(lr, latencySize, `${latencySize} with ${n} workers, ${latencyMs} ms provider`);
            rate.set(n, lr.sendsPerSecond);
            figures[`${label}: sends/s (${n} worker${n > 1 ? 's' : ''})`] = lr.sendsPerSecond;
            console.log(
              `[bench] replay ${latencySize} with ${n} workers, provider answering in ${latencyMs} ms: ${lr.sendsPerSecond.toFixed(0)} sends/s in ${lr.seconds.toFixed(1)} s, 0 duplicates, 0 claims lost; CPU per send: worker ${lr.cpuMsPerSend.toFixed(2)} ms, PostgreSQL ${lr.dbCpuMsPerSend.toFixed(2)} ms, sandbox + bench ${lr.benchCpuMsPerSend.toFixed(2)} ms`,
            );
          }
          figures[`${label}: ${workers} workers / 1 worker`] = rate.get(workers)! / rate.get(1)!;
          // What the provider allows: every handler keeps its lanes busy, each send waits latencyMs.
          figures[
            `${label}: ceiling of 1 worker (${latencyConcurrency} handler${latencyConcurrency > 1 ? 's' : ''} x 8 in flight / latency, sends/s)`
          ] = (latencyConcurrency * 8 * 1000) / latencyMs;
        } finally {
          sandbox.setLatency(0);
        }
      }
    }
  } finally {
    await sender.stop({ graceful: false });
    await sandbox.stop();
    await db.$disconnect();
    await owner.end();
  }
  return figures;
}

// `node --import tsx scripts/bench/replay.ts [sizes...]`: this benchmark alone, on a fresh database
// (default sizes 1,000 10,000 100,000; BENCH_REPLAY_WORKERS=1 skips the scale-out run).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startBenchDatabase } = await import('./harness.ts');
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const bench = await startBenchDatabase();
  try {
    console.log(await benchReplay({ ...bench, sizes }));
  } finally {
    await bench.stop();
  }
}
