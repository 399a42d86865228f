// Faults and load on the forced replay (issues 5, 6 and 7): worker processes (scripts/worker.ts, the
// real entry) against one database while
//   - PostgreSQL is stopped and started again mid-replay (its own embedded server, persistent data
//     in a temp dir, so the restart is a real one),
//   - the SMTP server refuses connections mid-replay,
//   - statements time out (the workers' statement_timeout, with the effect table locked meanwhile),
//   - 4 workers replay overlapping sets (two replays of the same frozen set, on two runs and two
//     providers) at once.
// Counted at the providers (the sandbox's deliveries, the test SMTP server's accepted messages): per
// target exactly one delivery, zero duplicates, no key done without the receipt of a delivered
// message, nothing silently lost (every target done, or unknown with evidence for support: S4).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb, sqlPool, type Db } from '@/lib/db/client.ts';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '@/lib/db/embedded.ts';
import { ensureAppLogin, withCredentials } from '@/lib/db/roles.ts';
import { applyMigrations } from '@/lib/db/schema-engine.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { getReplayProgress, installJobEngine, requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { userActor } from '@/tests/helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '@/tests/helpers/smtp-server.ts';
import { makeCampaign, until } from '@/tests/integration/replay-fixtures.ts';
import type { ProofContext, ProofPart, ProofRow, ProofSection } from '../section.ts';

const root = path.resolve(import.meta.dirname, '../../..');

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

export interface Providers {
  sandbox?: Sandbox;
  smtp?: TestSmtpServer;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** The last lines it printed (for a failure message). */
  tail(): string;
}

/** One worker process running scripts/worker.ts on `appUrl` with the given providers. */
export function spawnWorker(
  appUrl: string,
  p: Providers,
  opts: { concurrency?: number; reconcileSeconds?: number } = {},
): WorkerProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.MIGRATION_DATABASE_URL;
  Object.assign(env, {
    DATABASE_URL: appUrl,
    NODE_ENV: 'test',
    REPLAY_CONCURRENCY: String(opts.concurrency ?? 2),
    RECONCILE_INTERVAL_SECONDS: String(opts.reconcileSeconds ?? 1),
    LEDGER_PROVIDERS: JSON.stringify({
      ...(p.sandbox ? { sandbox: { type: 'sandbox', url: p.sandbox.url } } : {}),
      ...(p.smtp
        ? {
            smtp: {
              type: 'smtp',
              host: '127.0.0.1',
              port: p.smtp.port,
              ignoreTLS: true,
              from: 'campaigns@example.com',
              timeoutSeconds: 5,
              lookupUrl: p.smtp.lookupUrl,
            },
          }
        : {}),
    }),
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/worker.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, tail: () => out };
}

export async function stopWorkers(workers: WorkerProcess[]): Promise<void> {
  await Promise.all(
    workers.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }),
  );
}

/** A database query that may fail while the server is down: undefined instead of throwing. */
async function soft<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch {
    return undefined;
  }
}

export interface TargetVerdict {
  targets: number;
  done: number;
  unknown: number;
  /** A target with no delivery and no state saying so (not done, not unknown), or done without a delivery. */
  lost: number;
  /** Deliveries beyond the first per target, counted at the provider. */
  duplicated: number;
  /** done whose receipt does not name a message the provider delivered to that target (S2). */
  doneWithoutReceipt: number;
  states: Record<string, number>;
}

/** Compares the ledger's end state of a run's targets with what the provider counted. */
export async function verdictFor(
  owner: pg.Pool,
  runId: string,
  delivered: (target: string) => { count: number; receipts: Set<string> },
): Promise<TargetVerdict> {
  const rows = await owner.query<{ target: string; state: string | null; receipt: string | null }>(
    `SELECT pi.target, k.state::text AS state, e.receipt
       FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
       LEFT JOIN effect_key k ON k.key = pi.key LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
      WHERE pi.run_id = $1`,
    [runId],
  );
  const v: TargetVerdict = {
    targets: rows.rows.length,
    done: 0,
    unknown: 0,
    lost: 0,
    duplicated: 0,
    doneWithoutReceipt: 0,
    states: {},
  };
  for (const r of rows.rows) {
    const state = r.state ?? 'none';
    v.states[state] = (v.states[state] ?? 0) + 1;
    const d = delivered(r.target);
    v.duplicated += Math.max(0, d.count - 1);
    if (state === 'done') {
      v.done++;
      if (d.count === 0) v.lost++;
      if (!r.receipt || !d.receipts.has(r.receipt)) v.doneWithoutReceipt++;
    } else if (state === 'unknown') {
      v.unknown++;
    } else {
      v.lost++;
    }
  }
  return v;
}

const sandboxCount = (sandbox: Sandbox) => {
  const by = new Map<string, { count: number; receipts: Set<string> }>();
  for (const d of sandbox.deliveries) {
    const e = by.get(d.to) ?? { count: 0, receipts: new Set<string>() };
    e.count++;
    e.receipts.add(d.messageId);
    by.set(d.to, e);
  }
  return (target: string) => by.get(target) ?? { count: 0, receipts: new Set<string>() };
};

const smtpCount = (smtp: TestSmtpServer) => {
  const by = new Map<string, { count: number; receipts: Set<string> }>();
  for (const m of smtp.messages) {
    for (const to of m.to) {
      const e = by.get(to) ?? { count: 0, receipts: new Set<string>() };
      e.count++;
      e.receipts.add(`${m.messageId} queue=${m.queueId}`);
      by.set(to, e);
    }
  }
  return (target: string) => by.get(target) ?? { count: 0, receipts: new Set<string>() };
};

/** Waits until every replay completed and no key of the runs is still pending (the reconciler
 *  settled what a fault interrupted). Tolerates a database that is down meanwhile. */
async function settled(
  db: Db,
  owner: pg.Pool,
  replayIds: string[],
  runIds: string[],
  workers: WorkerProcess[],
  timeoutMs: number,
): Promise<void> {
  await until(
    'every replay completed and every claim settled',
    async () => {
      const dead = workers.find((w) => w.child.exitCode !== null);
      if (dead) throw new Error(`a worker exited with ${dead.child.exitCode}: ${dead.tail()}`);
      for (const id of replayIds) {
        const p = await soft(() => getReplayProgress({ db }, { replayId: id }));
        if (p?.status !== 'completed') return false;
      }
      const pending = await soft(() =>
        owner.query<{ n: string }>(
          `SELECT count(*) AS n FROM effect e JOIN plan_item pi ON pi.key = e.key WHERE pi.run_id = ANY($1::uuid[]) AND e.state = 'pending'`,
          [runIds],
        ),
      );
      return pending?.rows[0]?.n === '0';
    },
    timeoutMs,
    250,
  );
}

const operator = userActor('operator');

async function openDb(urls: { appUrl: string; ownerUrl: string }) {
  await installJobEngine(urls.ownerUrl);
  const db = createDb(urls.appUrl, 8);
  sqlPool(db)?.on('error', () => undefined); // a restarted server ends pooled connections
  const owner = new pg.Pool({ connectionString: urls.ownerUrl, max: 3 });
  owner.on('error', () => undefined);
  const sender = await startBoss(urls.appUrl);
  return {
    db,
    owner,
    sender,
    async close() {
      await sender.stop({ graceful: false }).catch(() => undefined);
      await db.$disconnect().catch(() => undefined);
      await owner.end().catch(() => undefined);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

export interface OverlapResult {
  workers: number;
  targets: number;
  replays: number;
  seconds: number;
  sent: number;
  /** Items skipped because the other replay got the target first: lost claim (F3) or changed after confirmation (F4). */
  skippedLostClaim: number;
  verdict: TargetVerdict;
  /** Replay items by outcome and the start of their note. */
  outcomes: Record<string, number>;
  /** Chunk jobs completed per worker process (pid -> count): the work was shared. */
  chunksPerWorker: number[];
}

/** F3 + issue 7: `workers` processes, two runs (sandbox and SMTP) with two replays each of the same
 *  frozen set, all four started at once. Every target must get exactly one delivery. */
export async function overlappingReplays(
  urls: { appUrl: string; ownerUrl: string },
  opts: { workers: number; targetsPerRun: number; log?: (l: string) => void },
): Promise<OverlapResult> {
  const d = await openDb(urls);
  const sandbox = await startSandbox();
  const smtp = await startTestSmtpServer();
  const workers: WorkerProcess[] = [];
  try {
    const runs = [
      await makeCampaign(
        d.db,
        { not_sent: opts.targetsPerRun },
        { provider: 'sandbox', fourEyesReplay: false, leaseSeconds: 30, settleWindowSeconds: 5 },
      ),
      await makeCampaign(
        d.db,
        { not_sent: opts.targetsPerRun },
        { provider: 'smtp', fourEyesReplay: false, leaseSeconds: 30, settleWindowSeconds: 5 },
      ),
    ];
    // Two replays per run, both frozen before either starts: the same targets in both sets.
    const replays: string[] = [];
    for (const c of runs) {
      for (let k = 0; k < 2; k++)
        replays.push(
          (
            await requestReplay(
              { db: d.db, actor: operator },
              { runId: c.runId, confirmCount: opts.targetsPerRun, reason: `overlap ${k}` },
            )
          ).replayId,
        );
    }
    for (let w = 0; w < opts.workers; w++)
      workers.push(spawnWorker(urls.appUrl, { sandbox, smtp }, { concurrency: 2 }));
    await until('every worker ready', async () => workers.every((w) => / ready: /.test(w.tail())), 120_000, 100);
    const t0 = Date.now();
    await Promise.all(
      replays.map((replayId) => startReplay({ db: d.db, actor: operator, jobs: d.sender }, { replayId })),
    );
    await settled(
      d.db,
      d.owner,
      replays,
      runs.map((c) => c.runId),
      workers,
      300_000,
    );
    const seconds = (Date.now() - t0) / 1000;
    const chunksPerWorker = workers.map((w) => (w.tail().match(/ processed/g) ?? []).length);
    const v1 = await verdictFor(d.owner, runs[0]!.runId, sandboxCount(sandbox));
    const v2 = await verdictFor(d.owner, runs[1]!.runId, smtpCount(smtp));
    const sums = await d.owner.query<{ sent: string; lost: string }>(
      `SELECT count(*) FILTER (WHERE outcome = 'sent') AS sent, count(*) FILTER (WHERE outcome = 'skipped') AS lost FROM replay_item WHERE replay_id = ANY($1::uuid[])`,
      [replays],
    );
    const outcomes: Record<string, number> = {};
    const byOutcome = await d.owner.query<{ o: string; n: string }>(
      `SELECT CASE WHEN outcome IN ('skipped', 'unknown') THEN outcome || ': ' || split_part(split_part(note, ':', 1), ' (', 1) ELSE coalesce(outcome, 'open') END AS o, count(*) AS n FROM replay_item WHERE replay_id = ANY($1::uuid[]) GROUP BY 1`,
      [replays],
    );
    for (const r of byOutcome.rows) outcomes[r.o] = Number(r.n);
    const merged: TargetVerdict = {
      targets: v1.targets + v2.targets,
      done: v1.done + v2.done,
      unknown: v1.unknown + v2.unknown,
      lost: v1.lost + v2.lost,
      duplicated: v1.duplicated + v2.duplicated,
      doneWithoutReceipt: v1.doneWithoutReceipt + v2.doneWithoutReceipt,
      states: {},
    };
    for (const v of [v1, v2])
      for (const [s, n] of Object.entries(v.states)) merged.states[s] = (merged.states[s] ?? 0) + n;
    return {
      workers: opts.workers,
      targets: merged.targets,
      replays: replays.length,
      seconds,
      sent: Number(sums.rows[0]!.sent),
      skippedLostClaim: Number(sums.rows[0]!.lost),
      verdict: merged,
      chunksPerWorker,
      outcomes,
    };
  } finally {
    await stopWorkers(workers);
    await sandbox.stop();
    await smtp.close();
    await d.close();
  }
}

/** The database stopped and started `restarts` times during one replay (sandbox provider). */
async function pgRestarts(opts: { targets: number; restarts: number; log: (l: string) => void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-replay-restart-'));
  chmodSync(dir, 0o755);
  const pgOpts = {
    dir: path.join(dir, 'pg'),
    port: await freePort(),
    password: 'restart',
    persistent: true,
    fsync: false,
  };
  let server: EmbeddedServer | undefined = await startEmbeddedPostgres(pgOpts);
  const workers: WorkerProcess[] = [];
  const sandbox = await startSandbox();
  let d: Awaited<ReturnType<typeof openDb>> | undefined;
  try {
    const admin = new pg.Client({ connectionString: server.ownerUrl() });
    await admin.connect();
    await admin.query('CREATE DATABASE replay_restart');
    await admin.end();
    const ownerUrl = server.ownerUrl('replay_restart');
    await applyMigrations(ownerUrl);
    await ensureAppLogin(ownerUrl, 'ledger_app_restart', 'restart-app');
    const appUrl = withCredentials(ownerUrl, 'ledger_app_restart', 'restart-app');
    d = await openDb({ appUrl, ownerUrl });
    const c = await makeCampaign(
      d.db,
      { not_sent: opts.targets },
      { provider: 'sandbox', fourEyesReplay: false, leaseSeconds: 3, settleWindowSeconds: 2 },
    );
    const req = await requestReplay(
      { db: d.db, actor: operator },
      { runId: c.runId, confirmCount: opts.targets, reason: 'restart proof' },
    );
    workers.push(spawnWorker(appUrl, { sandbox }, { concurrency: 2 }));
    await until('the worker ready', async () => / ready: /.test(workers[0]!.tail()), 120_000, 100);
    await startReplay({ db: d.db, actor: operator, jobs: d.sender }, { replayId: req.replayId });
    let restarts = 0;
    const downMs: number[] = [];
    for (let k = 1; k <= opts.restarts; k++) {
      // Restart points spread over the replay: after k/(n+1) of the targets were delivered.
      const at = Math.floor((opts.targets * k) / (opts.restarts + 1));
      await until(`${at} deliveries before restart ${k}`, async () => sandbox.deliveries.length >= at, 300_000, 20);
      const t = Date.now();
      await server.stop(); // fast shutdown: every connection ends, mid-statement ones included
      server = undefined;
      server = await startEmbeddedPostgres(pgOpts);
      downMs.push(Date.now() - t);
      restarts++;
      opts.log(
        `replay faults: PostgreSQL restart ${k}/${opts.restarts} after ${sandbox.deliveries.length} deliveries (down ${Date.now() - t} ms)`,
      );
    }
    await settled(d.db, d.owner, [req.replayId], [c.runId], workers, 300_000);
    const v = await verdictFor(d.owner, c.runId, sandboxCount(sandbox));
    return { restarts, downMs, verdict: v, workerAlive: workers[0]!.child.exitCode === null };
  } finally {
    await stopWorkers(workers);
    await d?.close();
    await sandbox.stop();
    await server?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The SMTP server refusing connections `windows` times during one replay. */
async function smtpRefusals(
  urls: { appUrl: string; ownerUrl: string },
  opts: { targets: number; windows: number; log: (l: string) => void },
) {
  const d = await openDb(urls);
  const smtp = await startTestSmtpServer();
  const workers: WorkerProcess[] = [];
  try {
    const c = await makeCampaign(
      d.db,
      { not_sent: opts.targets },
      { provider: 'smtp', fourEyesReplay: false, leaseSeconds: 3, settleWindowSeconds: 2 },
    );
    const req = await requestReplay(
      { db: d.db, actor: operator },
      { runId: c.runId, confirmCount: opts.targets, reason: 'smtp refusal proof' },
    );
    workers.push(spawnWorker(urls.appUrl, { smtp }, { concurrency: 2 }));
    await until('the worker ready', async () => / ready: /.test(workers[0]!.tail()), 120_000, 100);
    await startReplay({ db: d.db, actor: operator, jobs: d.sender }, { replayId: req.replayId });
    let refusedSends = 0;
    for (let k = 1; k <= opts.windows; k++) {
      const at = Math.floor((opts.targets * k) / (opts.windows + 1));
      await until(`${at} messages before refusal ${k}`, async () => smtp.messages.length >= at, 300_000, 20);
      const before = await d.owner.query<{ n: string }>(
        `SELECT count(*) AS n FROM effect_transition tr JOIN plan_item pi ON pi.key = tr.key WHERE pi.run_id = $1 AND tr.to_state = 'failed'`,
        [c.runId],
      );
      await smtp.refuseConnections();
      // Hold the refusal until the executor has met it (a claim freed as failed: nothing was sent).
      await until(
        'a send refused',
        async () => {
          const now = await d!.owner.query<{ n: string }>(
            `SELECT count(*) AS n FROM effect_transition tr JOIN plan_item pi ON pi.key = tr.key WHERE pi.run_id = $1 AND tr.to_state = 'failed'`,
            [c.runId],
          );
          const n = Number(now.rows[0]!.n) - Number(before.rows[0]!.n);
          if (n > 0) refusedSends += n;
          return n > 0;
        },
        120_000,
        50,
      );
      await smtp.acceptConnections();
      opts.log(`replay faults: SMTP refusal ${k}/${opts.windows} after ${smtp.messages.length} messages`);
    }
    await settled(d.db, d.owner, [req.replayId], [c.runId], workers, 300_000);
    const v = await verdictFor(d.owner, c.runId, smtpCount(smtp));
    return { windows: opts.windows, refusedSends, verdict: v };
  } finally {
    await stopWorkers(workers);
    await smtp.close();
    await d.close();
  }
}

/** Statement timeouts: the worker runs with statement_timeout = 1 s while the owner holds the effect
 *  table locked for 3 s, `windows` times: claims and transitions are cancelled mid-replay. */
async function statementTimeouts(
  urls: { appUrl: string; ownerUrl: string },
  opts: { targets: number; windows: number; log: (l: string) => void },
) {
  const d = await openDb(urls);
  const sandbox = await startSandbox();
  const workers: WorkerProcess[] = [];
  const locker = new pg.Client({ connectionString: urls.ownerUrl });
  await locker.connect();
  try {
    // A lease longer than the lock window: with a lease shorter than an outage the reconciler may
    // decide a blocked send unknown first (by the rules, S4), which is not what this row measures.
    const c = await makeCampaign(
      d.db,
      { not_sent: opts.targets },
      { provider: 'sandbox', fourEyesReplay: false, leaseSeconds: 30, settleWindowSeconds: 2 },
    );
    const req = await requestReplay(
      { db: d.db, actor: operator },
      { runId: c.runId, confirmCount: opts.targets, reason: 'statement timeout proof' },
    );
    const url = new URL(urls.appUrl);
    url.searchParams.set('options', '-c statement_timeout=1000');
    workers.push(spawnWorker(url.toString(), { sandbox }, { concurrency: 2 }));
    await until('the worker ready', async () => / ready: /.test(workers[0]!.tail()), 120_000, 100);
    await startReplay({ db: d.db, actor: operator, jobs: d.sender }, { replayId: req.replayId });
    let cancelled = 0;
    for (let k = 1; k <= opts.windows; k++) {
      const at = Math.floor((opts.targets * k) / (opts.windows + 1));
      await until(`${at} deliveries before lock ${k}`, async () => sandbox.deliveries.length >= at, 300_000, 20);
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE effect IN ACCESS EXCLUSIVE MODE');
      // Held until a statement of the worker was cancelled by its timeout (seen in its log), at least 3 s.
      const t = Date.now();
      const seen = (workers[0]!.tail().match(/statement timeout|canceling statement/g) ?? []).length;
      await until(
        'a statement cancelled by its timeout',
        async () =>
          Date.now() - t >= 3000 &&
          (workers[0]!.tail().match(/statement timeout|canceling statement/g) ?? []).length > seen,
        60_000,
        50,
      ).catch(() => undefined);
      await locker.query('COMMIT');
      cancelled++;
      opts.log(`replay faults: statement timeouts ${k}/${opts.windows} after ${sandbox.deliveries.length} deliveries`);
    }
    await settled(d.db, d.owner, [req.replayId], [c.runId], workers, 300_000);
    const v = await verdictFor(d.owner, c.runId, sandboxCount(sandbox));
    return { windows: cancelled, verdict: v };
  } finally {
    await stopWorkers(workers);
    await locker.end().catch(() => undefined);
    await sandbox.stop();
    await d.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The proof part
// ---------------------------------------------------------------------------------------------

const fmt = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
const row = (tried: string, trials: number, v: TargetVerdict, observed: string): ProofRow => ({
  tried,
  trials,
  lost: v.lost,
  duplicated: v.duplicated + v.doneWithoutReceipt,
  unauthorized: 0,
  observed: `${observed}; end states ${fmt(v.states)}; done without a delivered receipt ${v.doneWithoutReceipt}`,
});

export const proof: ProofPart = async (ctx: ProofContext): Promise<ProofSection> => {
  const full = ctx.scale === 'full';
  const rows: ProofRow[] = [];

  const restart = await pgRestarts({ targets: full ? 1000 : 150, restarts: full ? 5 : 2, log: ctx.log });
  rows.push(
    row(
      `PostgreSQL stopped and started ${restart.restarts} times during a forced replay of ${restart.verdict.targets} targets (1 worker process, sandbox)`,
      restart.restarts,
      restart.verdict,
      `down ${restart.downMs.join('/')} ms per restart; ${restart.verdict.done} done, ${restart.verdict.unknown} unknown (interrupted mid-call, with evidence); worker ${restart.workerAlive ? 'stayed up' : 'died'}`,
    ),
  );

  const refusal = await smtpRefusals(await ctx.newDatabase(), {
    targets: full ? 600 : 120,
    windows: full ? 5 : 2,
    log: ctx.log,
  });
  rows.push(
    row(
      `SMTP server refusing connections ${refusal.windows} times during a forced replay of ${refusal.verdict.targets} targets`,
      refusal.windows,
      refusal.verdict,
      `${refusal.refusedSends} sends refused (keys freed as failed, nothing sent, retried with backoff); ${refusal.verdict.done} done`,
    ),
  );

  const timeouts = await statementTimeouts(await ctx.newDatabase(), {
    targets: full ? 600 : 120,
    windows: full ? 3 : 1,
    log: ctx.log,
  });
  rows.push(
    row(
      `statement timeouts (worker statement_timeout 1 s, effect table locked >= 3 s) ${timeouts.windows} times during a forced replay of ${timeouts.verdict.targets} targets`,
      timeouts.windows,
      timeouts.verdict,
      `${timeouts.verdict.done} done, ${timeouts.verdict.unknown} unknown`,
    ),
  );

  const overlap = await overlappingReplays(await ctx.newDatabase(), {
    workers: 4,
    targetsPerRun: full ? 1000 : 150,
    log: ctx.log,
  });
  rows.push(
    row(
      `4 worker processes, 2 runs (sandbox, SMTP) x 2 overlapping replays of the same frozen set (${overlap.targets} targets, ${overlap.replays * (overlap.targets / 2)} replay items)`,
      overlap.targets,
      overlap.verdict,
      `per target exactly one delivery counted at the providers; ${overlap.sent} items sent, ${overlap.skippedLostClaim} skipped because the other replay had it (lost claim F3 / changed F4); chunks per worker ${overlap.chunksPerWorker.join('/')}; ${overlap.seconds.toFixed(0)} s`,
    ),
  );

  return {
    title: 'Faults: forced replay under database restarts, SMTP refusals, statement timeouts, 4 workers',
    proves: 'issues 5, 6, 7; F3, F5, S2, S3, S4, C1',
    rows,
    notes: [
      'Workers are real processes (scripts/worker.ts). The restart row uses its own embedded PostgreSQL with persistent data (fsync off, clean fast shutdowns); the others a fresh database on the shared server.',
      'duplicated counts deliveries beyond the first per target at the provider plus done keys whose receipt names no delivered message; lost counts targets neither done nor unknown, or done without a delivery.',
      "unknown is the rules' answer for a send interrupted between the call and its receipt (S4): never resent automatically, listed for support with the reconciler's evidence.",
    ],
  };
};
