// The background side of replays, run as its own process by scripts/worker.ts:
//  - chunk handlers on pg-boss (several per process, several processes per database),
//  - rescue: a handler holds a session advisory lock on its job id on a dedicated connection; when a
//    worker dies (kill -9) PostgreSQL drops the lock with the connection, and any worker seeing an
//    active job whose lock is free fails it so pg-boss retries it at once instead of after expiry,
//  - sweep: a running replay with items left and no open job (a crash between commit and enqueue)
//    gets its remaining items queued again,
//  - reconciliation (C1-C3) on start-up and every interval.
// Rescue, sweep and reconciliation run only in the leader when one is given (lib/ops/leader.ts: one
// at a time across every worker process); chunk handlers run in every worker.
import type pg from 'pg';
import type PgBoss from 'pg-boss';
import { sqlPool, type Db } from '../db/client.ts';
import { openLockSession } from '../db/lock-session.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { completeIfDone } from './complete-replay.ts';
import { executorActor, type ExecutorDeps } from './executor.ts';
import { enqueueRemaining, JOB_SCHEMA, openChunkJobs, REPLAY_QUEUE, startBoss, type ReplayChunk } from './jobs.ts';
import { backoffMs } from './persist-through-outage.ts';
import { RateLimiter } from './rate-limit.ts';
import { reconcileOnce, type ReconcileResult } from './reconcile.ts';
import { resumeApprovedBumps } from '../approvals/resume-bumps.ts';
import { runChunk } from './run-chunk.ts';

const LOCK_CLASS = 20583;

export interface WorkerOptions {
  appUrl: string;
  db: Db;
  providers: ProviderRegistry;
  concurrency?: number;
  reconcileIntervalMs?: number;
  payload?: ExecutorDeps['payload'];
  log?: (line: string) => void;
  onReconcile?: (r: ReconcileResult) => void;
  /** Whether this process may run rescue, sweep and reconciliation now (absent: always). */
  leader?: { isLeader(): boolean };
}

export interface ReplayWorker {
  boss: PgBoss;
  /** Stops taking chunks and waits up to graceMs (default 10 s) for the running ones to finish. */
  stop(graceMs?: number): Promise<void>;
}

export async function startReplayWorker(options: WorkerOptions): Promise<ReplayWorker> {
  const log = options.log ?? (() => undefined);
  const concurrency = options.concurrency ?? 4;
  // A database restart ends every pooled connection; the pool reports it as an 'error' event, which
  // without a listener would end the process. The next query opens a new connection.
  sqlPool(options.db)?.on('error', (e) => log(`database connection lost: ${e.message}`));
  const boss = await startBoss(options.appUrl, { work: true, max: concurrency + 2 });
  // The lock connection is replaced when it breaks (a database restart): locks held on the old one
  // are gone with it, so the rescue may re-run those chunks, which the ledger makes harmless.
  let lockClient: Promise<pg.Client> | undefined;
  let lockQueue: Promise<unknown> = Promise.resolve();
  const locks = {
    // One query at a time on the connection (pg 9 drops implicit queueing).
    query(sql: string, params: unknown[]) {
      const next = lockQueue.then(() => locks.run(sql, params));
      lockQueue = next.catch(() => undefined);
      return next;
    },
    async run(sql: string, params: unknown[]) {
      // Kept alive server-side (lib/db/lock-session.ts): a lost machine's chunk locks free within seconds.
      lockClient ??= openLockSession(
        { connectionString: options.appUrl, application_name: 'replay-worker-locks' },
        (e) => {
          log(`lock connection: ${e.message}`);
          lockClient = undefined;
        },
      ).catch((e: unknown) => {
        lockClient = undefined;
        throw e;
      });
      return (await lockClient).query(sql, params);
    },
    async end() {
      if (lockClient) await (await lockClient).end();
    },
  };
  const deps: ExecutorDeps = {
    db: options.db,
    providers: options.providers,
    limiter: new RateLimiter(options.db, (name) =>
      options.providers.has(name) ? options.providers.settings(name).rateLimitPerSecond : undefined,
    ),
    payload: options.payload,
    log,
  };

  let stopping = false;
  // Bounded exponential backoff for a chunk that fails without progress (a provider or the database
  // down for a while): 1 s, 2 s, 4 s ... at most 15 s per handler before the job goes back to pg-boss
  // (whose own retry delay is fixed); any progress resets it.
  let failuresInARow = 0;
  const wakeUps = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakeUps.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakeUps.add(done);
    });
  // A live handler (here or in another worker) still runs this chunk: pg-boss handed it out again,
  // after its expiry for instance. Returning would let pg-boss mark the job completed though its
  // holder may yet fail it, and its items would wait for the sweep; failed, it comes back after the
  // queue's retry delay and runs once its holder is done (or has died: the lock is then free).
  const refuseHeld = async (job: PgBoss.Job<ReplayChunk>) => {
    log(`chunk job ${job.id} is still held by a live handler; not running it twice, retried later`);
    await boss.fail(REPLAY_QUEUE, job.id, { reason: 'held by a live handler' });
  };
  // Chunk jobs a handler of this process runs now. pg_try_advisory_lock is re-entrant within a
  // session, and every handler here shares the lock connection, so the lock alone would let a job
  // handed out again to a second handler of this process run beside the first.
  const running = new Set<string>();
  const handle = async ([job]: PgBoss.Job<ReplayChunk>[]) => {
    if (!job) return;
    if (running.has(job.id)) return refuseHeld(job);
    running.add(job.id);
    let got;
    try {
      got = await locks.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [LOCK_CLASS, job.id]);
    } catch (error) {
      running.delete(job.id);
      throw error;
    }
    if (!got.rows[0]?.ok) {
      running.delete(job.id);
      return refuseHeld(job);
    }
    // The job is completed (or failed for a retry) while the lock is still held: released first, a
    // chunk that had finished looked like a dead worker's to the rescue (active, lock free) until
    // pg-boss marked it, and was failed and run again by another handler (seen with 4 workers).
    try {
      const r = await runChunk(deps, job.data);
      failuresInARow = 0;
      log(
        `chunk ${job.data.fromId}-${job.data.toId} of ${job.data.replayId}: ${r.processed} processed${r.stoppedBy ? `, stopped: ${r.stoppedBy}` : ''}`,
      );
      await boss.complete(REPLAY_QUEUE, job.id);
    } catch (error) {
      if (((error as { processed?: number }).processed ?? 0) > 0) failuresInARow = 0;
      const wait = stopping ? 0 : backoffMs(failuresInARow++, 15_000, 1_000);
      log(
        `chunk ${job.data.fromId}-${job.data.toId}: ${(error as Error).message}; retried in ${Math.round(wait / 100) / 10} s + the queue's delay`,
      );
      if (wait) await pause(wait);
      // pg-boss retries the chunk; if this call cannot reach the database either, pg-boss's own
      // fail (the handler throws) or the rescue does it.
      const failed = await boss.fail(REPLAY_QUEUE, job.id, { message: (error as Error).message }).then(
        () => true,
        () => false,
      );
      if (!failed) throw error;
    } finally {
      await locks.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, job.id]).catch(() => undefined);
      running.delete(job.id);
    }
  };
  // The lock connection is opened now: opened on a first chunk under load it could take longer than
  // the rescue's grace period, and the chunk would be taken for a dead worker's.
  await locks.query('SELECT 1', []);
  for (let i = 0; i < concurrency; i++)
    await boss.work<ReplayChunk>(REPLAY_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, handle);

  const rescue = async () => {
    const active = await options.db.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id::text AS id FROM ${JOB_SCHEMA}.job WHERE name = $1 AND state = 'active' AND started_on < now() - interval '3 seconds'`,
      REPLAY_QUEUE,
    );
    for (const { id } of active) {
      const [free] = await options.db.$queryRaw<
        { free: boolean }[]
      >`SELECT pg_try_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${id})) AS free`;
      if (free?.free) {
        // The job may have been completed between the SELECT and the lock check (its handler then
        // released the lock): fail() changes only a job not yet completed, so count what it changed.
        const r = (await boss.fail(REPLAY_QUEUE, id, { reason: 'worker died' })) as unknown as
          { affected?: number } | undefined;
        if (r?.affected !== 0) log(`rescued chunk job ${id}: its worker is gone`);
      }
    }
  };
  const sweep = async () => {
    const running = await options.db.replay.findMany({
      where: { status: 'running' },
      select: { id: true, runId: true },
    });
    for (const r of running) {
      if ((await openChunkJobs(options.db, r.id)) > 0) continue;
      if (await completeIfDone(options.db, r.id, r.runId, executorActor(r.id))) continue;
      const n = await enqueueRemaining(options.db, boss, r.id);
      if (n) log(`replay ${r.id}: queued ${n} chunks for its remaining items`);
    }
  };
  const reconcile = async () => {
    const r = await reconcileOnce({ db: options.db, providers: options.providers, log });
    if (r.examined)
      log(`reconciled ${r.examined}: ${r.done} done, ${r.unknown} unknown, ${r.waiting} waiting, ${r.errors} errors`);
    options.onReconcile?.(r);
    // Approved bump requests whose bumps a crash interrupted (lib/approvals/resume-bumps.ts).
    const resumed = await resumeApprovedBumps(options.db);
    if (resumed) log(`resumed the bumps of ${resumed} approved request(s)`);
  };
  const busy = new Set<string>();
  const guarded = (name: string, fn: () => Promise<void>) => async () => {
    if (stopping || busy.has(name)) return; // never two runs of one task at once
    if (options.leader && !options.leader.isLeader()) return; // another worker leads
    busy.add(name);
    try {
      await fn();
    } catch (error) {
      log(`${name}: ${(error as Error).message}`);
    } finally {
      busy.delete(name);
    }
  };
  await guarded('rescue', rescue)();
  await guarded('sweep', sweep)();
  await guarded('reconcile', reconcile)();
  const timers = [
    setInterval(guarded('rescue', rescue), 2_000),
    setInterval(guarded('sweep', sweep), 5_000),
    setInterval(guarded('reconcile', reconcile), options.reconcileIntervalMs ?? 30_000),
  ];

  return {
    boss,
    async stop(graceMs = 10_000) {
      stopping = true;
      for (const t of timers) clearInterval(t);
      for (const wake of [...wakeUps]) wake();
      await boss.stop({ graceful: true, wait: true, timeout: graceMs });
      await locks.end().catch(() => undefined);
    },
  };
}
