// Forced replay benchmark (issue 5): N pending targets replayed against the sandbox provider by the
// worker as its own process (scripts/worker.ts), compared with the raw claim ceiling measured in the
// same run (one-row INSERT ... ON CONFLICT DO NOTHING RETURNING, 16 connections), plus the worker's
// peak memory (VmHWM from /proc, sampled VmRSS as a cross-check) for each set size.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createDb } from '../../lib/db/client.ts';
import { approvePlan, submitPlan } from '../../lib/ledger/index.ts';
import { startSandbox } from '../../lib/providers/sandbox/index.ts';
import { getReplayProgress, installJobEngine, requestReplay, startBoss, startReplay } from '../../lib/replay/index.ts';
import { closedLoop } from './harness.ts';

const root = path.resolve(import.meta.dirname, '../..');

function memoryKb(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

export async function benchReplay(opts: { ownerUrl: string; appUrl: string; sizes: number[]; concurrency?: number }): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  await installJobEngine(opts.ownerUrl);
  const owner = new pg.Pool({ connectionString: opts.ownerUrl, max: 16 });
  const db = createDb(opts.appUrl, 20);
  const sandbox = await startSandbox();
  const sender = await startBoss(opts.appUrl);
  try {
    // The physical ceiling, same server, same run.
    await owner.query('CREATE TABLE IF NOT EXISTS bench_replay_raw (LIKE effect INCLUDING ALL)');
    const rawRun = await db.run.create({ data: { workflow: 'bench', eventId: (await db.event.create({ data: { triggerId: `bench-raw-${Date.now()}`, workflow: 'bench' } })).id, createdByKind: 'system', createdBy: 'bench' } });
    const raw = await closedLoop(20_000, 16, (i) =>
      owner.query(
        'INSERT INTO bench_replay_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by) VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key, epoch) DO NOTHING RETURNING id',
        [`raw-${i}`, 'pending', rawRun.id, `idem-${i}`, 'executor', 'bench'],
      ),
    );
    figures['raw claim ceiling (rows/s)'] = raw.perSecond;
    console.log(`[bench] replay: raw ceiling ${raw.perSecond.toFixed(0)} rows/s`);

    const system = { kind: 'system' as const, id: 'bench', label: 'bench' };
    const operator = { kind: 'user' as const, id: '00000000-0000-4000-8000-000000000001', label: 'bench operator', role: 'operator' as const };
    for (const size of opts.sizes) {
      const tool = await db.toolDefinition.create({
        data: { name: `bench_replay_${size}_${Date.now()}`, actions: ['notify'], targetType: 'email', provider: 'sandbox', generatedInputs: ['subject', 'body'], fourEyesReplay: false, supportsReceiptLookup: true, supportsIdempotencyKey: true },
      });
      const event = await db.event.create({ data: { triggerId: `bench-replay-${size}-${Date.now()}`, workflow: 'bench' } });
      const run = await db.run.create({ data: { workflow: 'bench', eventId: event.id, createdByKind: 'system', createdBy: 'bench' } });
      const items = Array.from({ length: size }, (_, i) => ({ tool: tool.name, action: 'notify', recordId: `r-${i}`, target: `user${i}@bench.example.com` }));
      const plan = await submitPlan({ db, actor: system }, { runId: run.id, items });
      await approvePlan({ db, actor: operator }, { planId: plan.planId, itemsHash: plan.itemsHash });
      const req = await requestReplay({ db, actor: operator }, { runId: run.id, confirmCount: size, reason: 'bench' });
      const delivered0 = sandbox.deliveries.length;

      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.MIGRATION_DATABASE_URL;
      Object.assign(env, {
        DATABASE_URL: opts.appUrl,
        REPLAY_CONCURRENCY: String(opts.concurrency ?? 8),
        RECONCILE_INTERVAL_SECONDS: '30',
        LEDGER_PROVIDERS: JSON.stringify({ sandbox: { type: 'sandbox', url: sandbox.url } }),
      });
      // BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the worker.
      const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
      const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'scripts/worker.ts'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
      let peakRss = 0;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryKb(child.pid!).rss)), 200);
      const t0 = Date.now();
      await startReplay({ db, actor: operator, jobs: sender }, { replayId: req.replayId });
      let lastLog = 0;
      for (;;) {
        const p = await getReplayProgress({ db }, { replayId: req.replayId });
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          console.log(`[bench] replay ${size}: ${p.sent}/${p.total} sent`);
        }
        if (p.status === 'completed') break;
        if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const seconds = (Date.now() - t0) / 1000;
      const hwm = memoryKb(child.pid!).hwm;
      clearInterval(sampler);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      const sent = sandbox.deliveries.length - delivered0;
      if (sent !== size) throw new Error(`replay of ${size} delivered ${sent}`);
      const perSecond = size / seconds;
      figures[`replay ${size}: sends/s`] = perSecond;
      figures[`replay ${size}: sends/s / raw claim ceiling`] = perSecond / raw.perSecond;
      figures[`replay ${size}: worker peak memory (MB, VmHWM)`] = Math.max(hwm, peakRss) / 1024;
      console.log(`[bench] replay ${size}: ${perSecond.toFixed(0)} sends/s, worker peak ${(Math.max(hwm, peakRss) / 1024).toFixed(0)} MB`);
    }
  } finally {
    await sender.stop({ graceful: false });
    await sandbox.stop();
    await db.$disconnect();
    await owner.end();
  }
  return figures;
}

// `node --import tsx scripts/bench/replay.ts 2000 10000`: this benchmark alone, on a fresh database.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startBenchDatabase } = await import('./harness.ts');
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const bench = await startBenchDatabase();
  try {
    console.log(await benchReplay({ ...bench, sizes: sizes.length ? sizes : [10_000, 100_000] }));
  } finally {
    await bench.stop();
  }
}
