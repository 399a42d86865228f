// Load, row 2 at full scale: 50 signed-in sessions browse a 1,000,000-item run over real HTTP
// against `next start` (runs list, run page first page, deep keyset pages, per-state filters, the
// audit trail) for BROWSE_SECONDS while a forced replay of another run is sent by the worker process
// through the sandbox provider. Everything runs on its own database (ctx.newDatabase()), its own
// sandbox, worker and `next start` on free ports, and is stopped at the end.
//
// The 1,000,000-item run is bulk-loaded with the console benchmark's loader (scripts/bench/console.ts,
// set-based SQL, keys not derived from the ledger's key function), so it is browsed but not
// replayed: the replay runs on a second run whose plan was submitted, approved, frozen and sent
// through the lib commands, so its deliveries can be counted per target at the sandbox.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { insertUser } from '@/lib/auth/users.ts';
import { createDb } from '@/lib/db/client.ts';
import { freePort } from '@/lib/db/embedded.ts';
import { approvePlan, createRun, submitPlan, type Actor } from '@/lib/ledger/index.ts';
import { startSandbox } from '@/lib/providers/sandbox/server.ts';
import {
  cancelReplay,
  getReplayProgress,
  installJobEngine,
  requestReplay,
  startBoss,
  startReplay,
} from '@/lib/replay/index.ts';
import { encodeCursor } from '@/lib/read-models/common.ts';
import { loadMillionItemRun } from '@/scripts/bench/console.ts';
import type { ProofContext, ProofRow } from '../section.ts';
import { browse, describeBrowse, fetchSession, signInOverHttp, type PageKind, type Session } from './load-browse.ts';
import { nextBuildIsFresh } from '@/scripts/support/next-build.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
export interface ConsoleLoadOptions {
  items: number;
  sessions: number;
  browseSeconds: number;
  replayItems: number;
  replayRatePerSecond: number;
  /** Pause between one session's requests (ms); 0 = closed loop. */
  thinkMs?: number;
  /** Rebuild the console when sources are newer than .next (default); false serves .next as it is. */
  build?: boolean;
}

/** The issue's figures: 50 sessions, a 1,000,000-item run, about 2.5 minutes of browsing. */
export const FULL: ConsoleLoadOptions = {
  items: 1_000_000,
  sessions: 50,
  browseSeconds: 150,
  replayItems: 30_000,
  replayRatePerSecond: 150,
};
const STATES = ['unknown', 'failed', 'revoked', 'pending', 'done'] as const;
const ALL_STATES = ['pending', 'done', 'failed', 'unknown', 'revoked', 'stuck', 'none'];

function ensureBuild(log: (line: string) => void): void {
  if (nextBuildIsFresh(ROOT)) return;
  log('console load: building the console (sources newer than .next)');
  const build = spawnSync('npx', ['--no-install', 'next', 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (build.status !== 0) throw new Error('next build failed');
}

async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined | null | false>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function stopGroup(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return Promise.resolve();
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }, 10_000);
  return exited.finally(() => clearTimeout(timer));
}

export async function consoleUnderLoad(
  ctx: ProofContext,
  options: ConsoleLoadOptions = FULL,
): Promise<{ row: ProofRow; notes: string[] }> {
  const {
    items: ITEMS,
    sessions: SESSIONS,
    browseSeconds: BROWSE_SECONDS,
    replayItems: REPLAY_ITEMS,
    replayRatePerSecond: REPLAY_RATE_PER_SECOND,
  } = options;
  const log = ctx.log;
  const database = await ctx.newDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ledger-proof-load-'));
  const secret = randomBytes(32).toString('base64url');
  let worker: ChildProcess | undefined;
  let next: ChildProcess | undefined;
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  let boss: Awaited<ReturnType<typeof startBoss>> | undefined;
  const db = createDb(database.appUrl, 8);
  const owner = new pg.Client({ connectionString: database.ownerUrl });
  await owner.connect();
  try {
    if (options.build !== false) ensureBuild(log);
    await installJobEngine(database.ownerUrl);
    log(`console load: bulk-loading a ${ITEMS.toLocaleString('en-US')}-item run`);
    const t0 = performance.now();
    const big = await loadMillionItemRun(database.ownerUrl, ITEMS);
    const loadSeconds = (performance.now() - t0) / 1000;

    // Deep keyset pages: the cursor of the k-th target and the target that must open the page.
    const deep: { cursor: string; first: string }[] = [];
    for (const k of [0.1, 0.3, 0.5, 0.7, 0.9, 0.99].map((f) => Math.floor(f * ITEMS) - 1)) {
      const r = await owner.query<{ target: string; id: string }>(
        `SELECT target, id::text FROM plan_item WHERE run_id = $1 ORDER BY target, id OFFSET $2 LIMIT 2`,
        [big.runId, k],
      );
      deep.push({ cursor: encodeCursor([r.rows[0]!.target, r.rows[0]!.id]), first: r.rows[1]!.target });
    }
    const [firstTarget] = (
      await owner.query<{ target: string }>(`SELECT min(target) AS target FROM plan_item WHERE run_id = $1`, [
        big.runId,
      ])
    ).rows;

    // People: 50 console users (each role), signed in later through the real credentials flow.
    log(`console load: creating ${SESSIONS} users`);
    const password = `proof-${randomBytes(9).toString('base64url')}`;
    const system: Actor = { kind: 'system', id: 'proof', label: 'proof: load' };
    const roles = ['operator', 'support', 'auditor', 'admin'] as const;
    const users: { id: string; email: string; role: (typeof roles)[number] }[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const role = roles[i % roles.length]!;
      const email = `load${String(i).padStart(2, '0')}.${role}@proof.example.com`;
      const u = await insertUser(db, { email, name: `Load ${i}`, role, password }, system);
      users.push({ id: u.id, email, role });
    }
    const operator = users.find((u) => u.role === 'operator')!;
    const operatorActor: Actor = { kind: 'user', id: operator.id, label: operator.email, role: 'operator' };

    // The replayed run: a plan of REPLAY_ITEMS never-sent targets, submitted and approved through the commands.
    log(`console load: a run of ${REPLAY_ITEMS.toLocaleString('en-US')} targets to replay`);
    await db.toolDefinition.create({
      data: {
        name: 'proof_load_notify',
        actions: ['notify'],
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: ['subject', 'body'],
        fourEyesReplay: false,
        supportsIdempotencyKey: true,
        supportsReceiptLookup: true,
      },
    });
    const replayRun = await createRun(
      { db, actor: system },
      { workflow: 'proof_load_replay', triggerId: `evt_proof_load_${Date.now().toString(36)}` },
    );
    const plan = await submitPlan(
      { db, actor: system },
      {
        runId: replayRun.runId,
        items: Array.from({ length: REPLAY_ITEMS }, (_, i) => ({
          tool: 'proof_load_notify',
          action: 'notify',
          recordId: `r-${i}`,
          target: `replayed${i}@proof.example.com`,
        })),
      },
    );
    await approvePlan(
      { db, actor: operatorActor },
      { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'proof: load' },
    );

    sandbox = await startSandbox({ host: '127.0.0.1' });
    const providers = JSON.stringify({
      sandbox: { type: 'sandbox', url: sandbox.url, rateLimitPerSecond: REPLAY_RATE_PER_SECOND },
    });
    const childEnv = {
      ...process.env,
      DATABASE_URL: database.appUrl,
      MIGRATION_DATABASE_URL: database.ownerUrl,
      LEDGER_DATA_DIR: dataDir,
      NEXTAUTH_SECRET: secret,
      NEXT_TELEMETRY_DISABLED: '1',
    };
    worker = spawn(process.execPath, ['--import', 'tsx', 'scripts/worker.ts'], {
      cwd: ROOT,
      env: { ...childEnv, LEDGER_PROVIDERS: providers, RECONCILE_INTERVAL_SECONDS: '3600' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let workerOut = '';
    worker.stdout!.on('data', (d: Buffer) => (workerOut = (workerOut + d.toString()).slice(-4000)));
    worker.stderr!.on('data', (d: Buffer) => (workerOut = (workerOut + d.toString()).slice(-4000)));
    await until('the replay worker is ready', 60_000, async () => {
      if (worker!.exitCode !== null) throw new Error(`the worker exited with ${worker!.exitCode}: ${workerOut}`);
      return workerOut.includes('ready:');
    });

    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}`;
    next = spawn('npx', ['--no-install', 'next', 'start', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: ROOT,
      env: { ...childEnv, NODE_ENV: 'production', NEXTAUTH_URL: baseURL },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let nextOut = '';
    next.stdout!.on('data', (d: Buffer) => (nextOut = (nextOut + d.toString()).slice(-8000)));
    next.stderr!.on('data', (d: Buffer) => (nextOut = (nextOut + d.toString()).slice(-8000)));
    await until('next start answers /sign-in', 120_000, async () => {
      if (next!.exitCode !== null) throw new Error(`next start exited with ${next!.exitCode}: ${nextOut}`);
      const res = await fetch(`${baseURL}/sign-in`, { redirect: 'manual' }).catch(() => null);
      return res !== null && res.status < 500;
    });

    log(`console load: signing in ${SESSIONS} sessions through the credentials flow`);
    const sessions: Session[] = [];
    for (let i = 0; i < users.length; i += 10) {
      sessions.push(
        ...(await Promise.all(users.slice(i, i + 10).map((u) => signInOverHttp(baseURL, u.email, password)))),
      );
    }

    // The forced replay: frozen, started, and seen sending before the browsing starts.
    boss = await startBoss(database.appUrl);
    const req = await requestReplay(
      { db, actor: operatorActor },
      { runId: replayRun.runId, confirmCount: REPLAY_ITEMS, reason: 'proof: load (replay during browsing)' },
    );
    await startReplay({ db, actor: operatorActor, jobs: boss }, { replayId: req.replayId });
    await until(
      'the replay sends',
      120_000,
      async () => (await getReplayProgress({ db }, { replayId: req.replayId })).sent > 0,
    );
    const sentBefore = (await getReplayProgress({ db }, { replayId: req.replayId })).sent;

    // Shells over JSON views (components/views/): the markers are facts of the view's answer.
    const pages: PageKind[] = [
      { kind: 'runs list', shell: true, path: () => '/runs', markers: () => ['"shownStatus"', `"id":"${big.runId}"`] },
      {
        kind: 'run first page',
        shell: true,
        path: () => `/runs/${big.runId}`,
        markers: () => ['"rows":[{"id"', JSON.stringify(firstTarget!.target)],
      },
      {
        kind: 'deep keyset page',
        shell: true,
        path: (i) => `/runs/${big.runId}?cursor=${deep[i % deep.length]!.cursor}`,
        markers: (i) => [JSON.stringify(deep[i % deep.length]!.first)],
      },
      {
        kind: 'state filter',
        shell: true,
        path: (i) => `/runs/${big.runId}?state=${STATES[i % STATES.length]}`,
        markers: (i) => [`"state":"${STATES[i % STATES.length]}","changedBy"`],
        forbidden: (i) =>
          ALL_STATES.filter((s) => s !== STATES[i % STATES.length]).map((s) => `"state":"${s}","changedBy"`),
      },
      { kind: 'audit trail', shell: true, path: () => '/audit', markers: () => ['"chain":{'] },
    ];
    log(`console load: ${SESSIONS} sessions browsing for ${BROWSE_SECONDS} s while the replay runs`);
    // What the database is doing meanwhile (sampled as the owner once a second): active statements of
    // all connections but the job engine's, and how many of them recompute P4 over the big plan at once.
    const peak = { active: 0, p4: 0, samples: 0 };
    let sampling = true;
    const sampler = (async () => {
      const probe = new pg.Client({ connectionString: database.ownerUrl });
      await probe.connect();
      try {
        while (sampling) {
          const [r] = (
            await probe.query<{ active: number; p4: number }>(
              `SELECT count(*) FILTER (WHERE state = 'active')::int AS active,
                    count(*) FILTER (WHERE state = 'active' AND query LIKE '%HAVING count(*) = 1%')::int AS p4
               FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name NOT LIKE 'replay-%'`,
            )
          ).rows;
          peak.active = Math.max(peak.active, r!.active);
          peak.p4 = Math.max(peak.p4, r!.p4);
          peak.samples++;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      } finally {
        await probe.end();
      }
    })();
    const stats = await browse({
      sessions,
      pages,
      durationMs: BROWSE_SECONDS * 1000,
      anonymous: fetchSession(baseURL, 'anonymous', null),
      anonymousEvery: 25,
      warmUp: true,
      thinkMs: options.thinkMs ?? 0,
      log,
    });
    sampling = false;
    await sampler;
    const during = await getReplayProgress({ db }, { replayId: req.replayId });

    // Stop the replay (it is not meant to finish here) and wait until no send of it is in flight.
    if (during.status === 'running')
      await cancelReplay(
        { db, actor: operatorActor },
        { replayId: req.replayId, reason: 'proof: load, browsing ended' },
      );
    // Settled: no claim of the replayed run still pending, and the replay's sent counter caught up with
    // the done keys (the executor records an item's outcome just after marking its key done).
    await until('the replay has settled (nothing in flight, sent counter = done keys)', 120_000, async () => {
      const [r] = (
        await owner.query<{ pending: number; done: number }>(
          `SELECT count(*) FILTER (WHERE e.state = 'pending' AND NOT e.awaiting_claim)::int AS pending, count(*) FILTER (WHERE e.state = 'done')::int AS done
           FROM effect e JOIN effect_key k ON k.key = e.key AND k.current_epoch = e.epoch WHERE k.run_id = $1`,
          [replayRun.runId],
        )
      ).rows;
      return r!.pending === 0 && (await getReplayProgress({ db }, { replayId: req.replayId })).sent === r!.done;
    });
    const final = await getReplayProgress({ db }, { replayId: req.replayId });

    // Counted at the provider: deliveries per target; every target the ledger holds done was delivered.
    const perTarget = new Map<string, number>();
    for (const d of sandbox.deliveries) perTarget.set(d.to, (perTarget.get(d.to) ?? 0) + 1);
    const duplicated = [...perTarget.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    const done = (
      await owner.query<{ target: string }>(
        `SELECT k.target FROM effect_key k WHERE k.run_id = $1 AND k.state = 'done'`,
        [replayRun.runId],
      )
    ).rows;
    const doneTargets = new Set(done.map((r) => r.target));
    const doneUndelivered = done.filter((r) => !perTarget.has(r.target)).length;
    const deliveredNotDone = [...perTarget.keys()].filter((t) => !doneTargets.has(t)).length;

    const pageFailures = stats.failures.length;
    const row: ProofRow = {
      tried: `${SESSIONS} signed-in console sessions browsing a ${ITEMS.toLocaleString('en-US')}-item run over HTTP (runs list, first page, deep keyset pages, state filters, audit trail) for ${BROWSE_SECONDS} s while a forced replay is sent`,
      trials: stats.requests,
      lost: pageFailures + doneUndelivered,
      duplicated,
      unauthorized: stats.anonymousServed,
      observed:
        `${describeBrowse(stats)}. Replay of ${REPLAY_ITEMS.toLocaleString('en-US')} targets (worker, sandbox limited to ${REPLAY_RATE_PER_SECOND}/s): ` +
        `${during.sent - sentBefore} sent during the browsing, ${final.sent} sent in all, status ${final.status}; sandbox: ${sandbox.deliveries.length} deliveries to ` +
        `${perTarget.size} targets, ${doneUndelivered} done without a delivery, ${deliveredNotDone} delivered but not done. ` +
        `Database while browsing (${peak.samples} samples): peak ${peak.active} active statements (console and worker), peak ${peak.p4} concurrent P4 recomputations. ${ITEMS.toLocaleString('en-US')}-item bulk load ${loadSeconds.toFixed(0)} s`,
    };
    const notes = [
      "Console under load: closed loop, no think time (each session asks for its next page as soon as the previous one arrived); every session signed in through next-auth's credentials flow (CSRF token, POST /api/auth/callback/credentials) and keeps its own cookie. " +
        'Latencies are end-to-end over HTTP on the same 2-core machine as PostgreSQL, the worker and the load generator.',
      'Mapping: a page request counts in lost when it was not served correctly (network error, any status other than 200 including a redirect to /sign-in, or 200 without its page marker, e.g. an error boundary); ' +
        'a target the ledger holds done without a delivery at the sandbox counts in lost too. duplicated = deliveries beyond one per target at the sandbox. ' +
        'unauthorized = anonymous probes (the same page without a cookie, every 25th request of a session) that were served a page instead of a redirect to /sign-in.',
      `The ${ITEMS.toLocaleString('en-US')}-item run is bulk-loaded with the console benchmark's set-based loader (its keys are not the ledger's derived keys), so the forced replay runs on a second run of ${REPLAY_ITEMS.toLocaleString('en-US')} targets whose plan went through submit, approve and freeze; it is cancelled when the browsing ends.`,
    ];
    if (pageFailures)
      notes.push(
        `Failed requests (first 5): ${stats.failures
          .slice(0, 5)
          .map((f) => `${f.kind} ${f.path.slice(0, 80)} -> ${f.why}`)
          .join(' | ')}`,
      );
    return { row, notes };
  } finally {
    await stopGroup(next);
    await stopGroup(worker);
    await boss?.stop({ graceful: false }).catch(() => undefined);
    await sandbox?.stop().catch(() => undefined);
    await db.$disconnect();
    await owner.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
