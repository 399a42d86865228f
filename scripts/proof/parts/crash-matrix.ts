// Faults: the crash matrix (issue 6). A child process (scripts/proof/children/crash-effect.ts) does one
// effect through the SDK over the HTTP API against the sandbox provider and is killed with a real
// SIGKILL at one point of the effect. Per point: many trials (one child, one key, one kill each) on
// one database, then what a restarted runtime and the reconciler do with the same keys, counted at
// the provider:
//   before the claim commits          -> nothing; the restarted runtime sends it (a first send)
//   after the claim commits           -> pending; the reconciler waits inside the settle window, then unknown
//   after the provider answered       -> pending; unknown (no receipt reached the ledger; S4)
//   after the raw response was stored -> pending; the reconciler finds the stored receipt: done (C1)
//   after the receipt was written     -> done
// In every case: no automatic resend (S4), no delivery the ledger does not account for.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { mkdirSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createLedger } from '@/lib/sdk/client.ts';
import { httpTransport } from '@/lib/sdk/http.ts';
import { SandboxProvider, startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import '@/lib/providers/sandbox/register.ts';
import { reconcileOnce, type ReconcileResult } from '@/lib/replay/reconcile.ts';
import { makeKey } from '@/tests/integration/api-support.ts';
import { makeRun, makeTool } from '@/tests/helpers/factories.ts';
import type { ProofContext, ProofPart, ProofRow, ProofSection } from '../section.ts';
import {
  CRASH_POINTS,
  type ChildMessage,
  type CrashOrder,
  type CrashPoint,
  type InFlightOrder,
} from '../support/faults-crash-protocol.ts';
import {
  countBy,
  expireLeases,
  fmtCounts,
  openFaultDb,
  startApiServer,
  statesByTarget,
  until,
  type FaultDb,
  type KeyState,
} from '../support/faults-harness.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CHILD = path.join(ROOT, 'scripts/proof/children/crash-effect.ts');
const IN_FLIGHT_CHILD = path.join(ROOT, 'scripts/proof/children/claim-in-flight.ts');

type Mode = CrashPoint | 'claim-in-flight';

const DESCRIPTION: Record<Mode, string> = {
  'claim-in-flight':
    'kill -9 while the claim statement runs inside PostgreSQL, not committed (runtime with its own connection)',
  'before-claim-commit': 'kill -9 before the claim commits (as the claim is issued)',
  'after-claim-commit': 'kill -9 after the claim commits, before the provider call',
  'after-provider-answer': 'kill -9 after the provider answered, before anything reached the ledger',
  'after-receipt-written': 'kill -9 after the receipt was written (done)',
};

/** End state right after the kills (before any reconciliation) and after reconciliation. */
const EXPECTED: Record<Mode, { atKill: string; final: string }> = {
  // Either, depending on whether PostgreSQL commits the orphaned statement: none -> done (first send), pending -> unknown.
  'claim-in-flight': { atKill: 'none|pending', final: 'done|unknown' },
  'before-claim-commit': { atKill: 'none', final: 'done' },
  'after-claim-commit': { atKill: 'pending', final: 'unknown' },
  // The sandbox finds the message by its idempotency key: the reconciler completes it, nobody has to.
  'after-provider-answer': { atKill: 'pending', final: 'done' },
  'after-receipt-written': { atKill: 'done', final: 'done' },
};

export interface PointResult {
  point: Mode;
  trials: number;
  kills: number;
  atKill: Record<string, number>;
  /** After a reconciliation pass with the lease expired and the settle window still open (C2). */
  insideWindow: Record<string, number>;
  final: Record<string, number>;
  reconcileInside: ReconcileResult;
  reconcileAfter: ReconcileResult;
  restart1: Record<string, number>;
  restart2: Record<string, number>;
  deliveriesAtKill: number;
  deliveriesFinal: number;
  resends: number;
  lost: number;
  duplicated: number;
  violations: string[];
  seconds: number;
}

interface ReadyChild {
  child: ChildProcess;
  messages: ChildMessage[];
  waiters: (() => void)[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A child as one ES module bundled by esbuild (tsx's own compiler; packages stay external and
 *  resolve from the project's node_modules): node starts it several times faster than
 *  `node --import tsx`, and spawn cost is most of a trial. Same sources, same code path; falls back
 *  to tsx if the bundle cannot be built. */
async function childCommand(entry: string, dir: string): Promise<string[]> {
  try {
    const { build } = (await import('esbuild' as string)) as {
      build: (o: Record<string, unknown>) => Promise<unknown>;
    };
    mkdirSync(dir, { recursive: true });
    const outfile = path.join(dir, `${path.basename(entry, '.ts')}.mjs`);
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile,
      packages: 'external',
      logLevel: 'warning',
    });
    return [outfile];
  } catch {
    return ['--import', 'tsx', entry];
  }
}

function spawnChild(args: string[]): Promise<ReadyChild> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const c: ReadyChild = {
    child,
    messages: [],
    waiters: [],
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.on('message', (m: ChildMessage) => {
    c.messages.push(m);
    for (const w of c.waiters.splice(0)) w();
  });
  return next(c, (m) => m.type === 'ready', 60_000).then(() => c);
}

/** Waits for a message from the child (event-driven, with a deadline). */
function next(c: ReadyChild, match: (m: ChildMessage) => boolean, timeoutMs: number): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `child ${c.child.pid}: no matching message within ${timeoutMs} ms (got ${JSON.stringify(c.messages)})`,
          ),
        ),
      timeoutMs,
    );
    const check = () => {
      const hit = c.messages.find(match) ?? c.messages.find((m) => m.type === 'error' || m.type === 'finished');
      if (hit) {
        clearTimeout(timer);
        resolve(hit);
        return;
      }
      c.waiters.push(check);
    };
    void c.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`child ${c.child.pid} exited (${code ?? signal}) before the expected message`));
    });
    check();
  });
}

const PAYLOAD = { subject: 'Welcome', body: 'Hello from the crash matrix' };

/** One trial of the in-flight row: the proof holds EXCLUSIVE on effect_key (reads pass, the claim's
 *  insert waits), sees the child's claim statement waiting in pg_stat_activity, kills the child,
 *  releases the lock and waits until the orphaned backend has ended (committed or rolled back). */
async function inFlightTrial(
  fdb: FaultDb,
  sandboxUrl: string,
  specs: CrashOrder['spec'][],
  command: string[],
  violations: string[],
) {
  const runtimeId = randomUUID();
  let warm: Promise<ReadyChild> | null = spawnChild(command);
  return async (i: number): Promise<boolean> => {
    const c = await (warm as Promise<ReadyChild>);
    warm = i + 1 < specs.length ? spawnChild(command) : null;
    const appName = `crash_in_flight_${process.pid}_${i}_${Date.now().toString(36)}`;
    const url = new URL(fdb.appUrl);
    url.searchParams.set('application_name', appName);
    const order: InFlightOrder = { appUrl: url.toString(), runtimeId, sandboxUrl, spec: specs[i]!, payload: PAYLOAD };
    const blocker = await fdb.owner.connect();
    let killed = false;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE effect_key IN EXCLUSIVE MODE');
      c.child.send(order);
      const backend = await until(
        'the claim statement waiting inside PostgreSQL',
        async () => {
          // Not on the blocker: inside its transaction pg_stat_activity is a snapshot taken at first read.
          const r = await fdb.owner.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%ledger_claim%'`,
            [appName],
          );
          return r.rows[0]?.pid;
        },
        15_000,
        10,
      );
      c.child.kill('SIGKILL');
      const exit = await c.exited;
      killed = exit.signal === 'SIGKILL';
      if (!killed) violations.push(`in-flight trial ${i}: the child ended with ${exit.code ?? exit.signal}`);
      await blocker.query('ROLLBACK');
      await until(
        'the orphaned backend to end',
        async () => (await fdb.owner.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [backend])).rowCount === 0,
        60_000,
        10,
      );
    } catch (error) {
      const seen = await fdb.owner
        .query(
          `SELECT application_name, state, wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        )
        .catch(() => ({ rows: [] }));
      violations.push(
        `in-flight trial ${i}: ${(error as Error).message}; ${JSON.stringify(seen.rows)}; child: ${JSON.stringify(c.messages)}`,
      );
      c.child.kill('SIGKILL');
      await blocker.query('ROLLBACK').catch(() => undefined);
    } finally {
      blocker.release();
    }
    return killed;
  };
}

async function runPoint(
  ctx: ProofContext,
  point: Mode,
  trials: number,
  command: string[],
  parallel: number,
): Promise<PointResult> {
  const started = Date.now();
  const violations: string[] = [];
  const fdb = await openFaultDb(ctx, 8);
  const sandbox: Sandbox = await startSandbox();
  const api = await startApiServer(fdb.db);
  try {
    const tool = (await makeTool(fdb.db, { provider: 'sandbox', leaseSeconds: 300 })).name;
    const { runId } = await makeRun(fdb.db);
    const runtime = await makeKey(fdb.db);
    const specs = Array.from({ length: trials }, (_, i) => ({
      run: runId,
      tool,
      action: 'campaign_welcome',
      record: `customer-${i}`,
      target: `crash-${i}@matrix.example.com`,
    }));

    // Trials: one child per kill, `parallel` children at a time (each with its own key).
    let kills = 0;
    let done = 0;
    const inFlight =
      point === 'claim-in-flight' ? await inFlightTrial(fdb, sandbox.url, specs, command, violations) : null;
    const trial = async (i: number) => {
      if (inFlight) {
        if (await inFlight(i)) kills++;
        done++;
        if (done % 10 === 0 || done === trials) ctx.log(`crash matrix: ${point}, ${done}/${trials}`);
        return;
      }
      const c = await spawnChild(command);
      try {
        const order: CrashOrder = {
          point: point as CrashPoint,
          baseUrl: api.url,
          runtimeKey: runtime.token,
          sandboxUrl: sandbox.url,
          spec: specs[i]!,
          payload: PAYLOAD,
        };
        c.child.send(order);
        const m = await next(c, (x) => x.type === 'at', 60_000).catch(
          (error: Error) => ({ type: 'error', message: error.message }) as ChildMessage,
        );
        if (m.type !== 'at') violations.push(`trial ${i}: the child did not reach ${point}: ${JSON.stringify(m)}`);
        c.child.kill('SIGKILL');
        const exit = await c.exited;
        if (m.type === 'at' && exit.signal === 'SIGKILL') kills++;
        else if (m.type === 'at')
          violations.push(`trial ${i}: the child ended with ${exit.code ?? exit.signal}, not SIGKILL`);
      } finally {
        if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
      }
      done++;
      if (done % 25 === 0 || done === trials) ctx.log(`crash matrix: ${point}, ${done}/${trials}`);
    };
    let nextTrial = 0;
    await Promise.all(
      Array.from({ length: Math.min(inFlight ? 1 : parallel, trials) }, async () => {
        while (nextTrial < trials) await trial(nextTrial++);
      }),
    );

    const deliveredTo = (target: string) => sandbox.deliveriesTo(target).length;
    const atKill = await statesByTarget(fdb.owner, runId);
    const stateOf = (m: Map<string, KeyState>, target: string) => m.get(target)?.state ?? 'none';
    const deliveriesAtKill = sandbox.deliveries.length;
    const atKillDeliveries = new Map(specs.map((s) => [s.target, deliveredTo(s.target)]));

    // A restarted runtime runs the same effects (same keys) at once, leases not yet expired.
    const provider = new SandboxProvider(sandbox.url);
    const ledger = createLedger(httpTransport({ baseUrl: api.url, runtimeKey: runtime.token }));
    const restart = async () => {
      const out: string[] = [];
      // A runtime running its effects four at a time (each key once).
      for (let k = 0; k < specs.length; k += 4) {
        await Promise.all(
          specs.slice(k, k + 4).map(async (spec) => {
            const r = await ledger.effect(
              spec,
              ({ idempotencyKey, key, epoch, signal }) =>
                provider.send({ key, epoch, idempotencyKey, target: spec.target, payload: PAYLOAD }, signal),
              { provider },
            );
            out.push(r.status === 'skipped' ? `skipped (${r.state})` : r.status);
          }),
        );
      }
      return countBy(out, (x) => x);
    };
    const restart1 = await restart();

    // Reconciliation with the clock injected: leases expired; first with the settle window still
    // open (a miss is no evidence, C2), then with it passed.
    await expireLeases(fdb.owner, runId);
    const registry = (settleWindowSeconds: number) =>
      new ProviderRegistry({ sandbox: { type: 'sandbox', url: sandbox.url, settleWindowSeconds } });
    const reconcileAll = async (providers: ProviderRegistry) => {
      const total: ReconcileResult = { examined: 0, done: 0, unknown: 0, waiting: 0, errors: 0 };
      const r = await reconcileOnce({ db: fdb.db, providers, limit: 10_000 });
      for (const k of Object.keys(total) as (keyof ReconcileResult)[]) total[k] += r[k];
      return total;
    };
    const reconcileInside = await reconcileAll(registry(3600));
    const insideWindow = await statesByTarget(fdb.owner, runId);
    await expireLeases(fdb.owner, runId);
    const reconcileAfter = await reconcileAll(registry(0));

    // The runtime restarts again after reconciliation: everything is settled, nothing may go out.
    const deliveriesBefore2 = sandbox.deliveries.length;
    const restart2 = await restart();
    if (sandbox.deliveries.length !== deliveriesBefore2)
      violations.push(`the second restart sent ${sandbox.deliveries.length - deliveriesBefore2} messages`);

    const final = await statesByTarget(fdb.owner, runId);
    let lost = 0;
    let duplicated = 0;
    let resends = 0;
    const exp = EXPECTED[point];
    for (const spec of specs) {
      const t = spec.target;
      const s0 = stateOf(atKill, t);
      const sf = final.get(t);
      const n = deliveredTo(t);
      if (n > 1) duplicated += n - 1;
      // A resend: a delivery made after the kill for a key the ledger already held.
      if (s0 !== 'none' && n > (atKillDeliveries.get(t) ?? 0)) resends += n - (atKillDeliveries.get(t) ?? 0);
      if (!sf || sf.state === 'none' || sf.orphan) {
        lost++; // a claim with no state, or an effect that never happened and nothing says so
        continue;
      }
      if (n > 0 && sf.state !== 'done' && sf.state !== 'unknown') lost++;
      if (sf.state === 'done') {
        const receipts = new Set(sandbox.deliveriesTo(t).map((d) => d.messageId));
        if (n === 0 || !sf.receipt || !receipts.has(sf.receipt)) lost++; // done without the provider's receipt
      }
      if (!exp.atKill.split('|').includes(s0)) violations.push(`${t}: ${s0} after the kill, expected ${exp.atKill}`);
      const wantFinal = point === 'claim-in-flight' ? (s0 === 'none' ? 'done' : 'unknown') : exp.final;
      if (sf.state !== wantFinal) violations.push(`${t}: ${sf.state} after reconciliation, expected ${wantFinal}`);
    }
    if (resends > 0) violations.push(`${resends} automatic resends`);
    return {
      point,
      trials,
      kills,
      atKill: countBy(specs, (s) => stateOf(atKill, s.target)),
      insideWindow: countBy(specs, (s) => stateOf(insideWindow, s.target)),
      final: countBy(specs, (s) => stateOf(final, s.target)),
      reconcileInside,
      reconcileAfter,
      restart1,
      restart2,
      deliveriesAtKill,
      deliveriesFinal: sandbox.deliveries.length,
      resends,
      lost,
      duplicated,
      violations,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await api.close();
    await sandbox.stop();
    await fdb.close();
  }
}

export async function runCrashMatrix(ctx: ProofContext): Promise<{ section: ProofSection; points: PointResult[] }> {
  const trials = ctx.scale === 'full' ? 100 : 5;
  const points: PointResult[] = [];
  const bundles = path.join(ROOT, 'node_modules/.cache/proof-faults', `${process.pid}-${Date.now().toString(36)}`);
  try {
    const command = await childCommand(CHILD, bundles);
    for (const point of CRASH_POINTS) points.push(await runPoint(ctx, point, trials, command, 3));
    // A runtime holding its own connection, killed while its claim statement is inside PostgreSQL.
    points.push(
      await runPoint(
        ctx,
        'claim-in-flight',
        ctx.scale === 'full' ? 20 : 3,
        await childCommand(IN_FLIGHT_CHILD, bundles),
        1,
      ),
    );
  } finally {
    rmSync(bundles, { recursive: true, force: true });
  }
  const rows: ProofRow[] = points.map((p) => ({
    tried: DESCRIPTION[p.point],
    trials: p.trials,
    lost: p.lost,
    duplicated: p.duplicated,
    unauthorized: 0,
    observed: [
      `${p.kills}/${p.trials} killed by SIGKILL at the point`,
      `right after the kills: ${fmtCounts(p.atKill)}`,
      `lease expired, inside the settle window: ${fmtCounts(p.insideWindow)}`,
      `after reconciliation: ${fmtCounts(p.final)}`,
      `restarted runtime: ${fmtCounts(p.restart1)}; again after reconciliation: ${fmtCounts(p.restart2)}`,
      `provider deliveries ${p.deliveriesAtKill} at the kills, ${p.deliveriesFinal} at the end; automatic resends ${p.resends}`,
      `unexpected: ${p.violations.length}${p.violations.length ? ` (first: ${p.violations[0]})` : ''}`,
      `${p.seconds.toFixed(0)} s`,
    ].join('; '),
  }));
  return {
    points,
    section: {
      title: 'Faults: crash matrix',
      proves: 'S1, S2, S4, R1, R2, C1, C2',
      rows,
      notes: [
        'Each trial is one child process (`node --import tsx scripts/proof/children/crash-effect.ts`) doing one effect through the SDK (HTTP transport) against the agent API on a real socket and the sandbox provider; the parent sends it SIGKILL when the child reports the point. The points are hooks of the child only (a wrapped fetch and provider call), not branches in lib/.',
        'One database per point, one key per trial. After the kills a restarted runtime runs the same effects (same keys), then the reconciler runs with the lease expired and the settle window first open (3600 s: a lookup miss is no evidence, C2), then passed (0 s); then the runtime restarts once more. The clock is injected (lease moved into the past, settle window as a provider setting), nothing sleeps.',
        'lost: a delivery the ledger does not hold as done or unknown, a done whose receipt is not a delivered message, a key with no state, or (before the claim) an effect that never went out. duplicated: deliveries beyond one per key, counted at the sandbox.',
        '"before the claim commits": the child is killed as it issues the claim, before the request leaves it; a runtime killed while its claim request is already at the server has its claim committed by the server, which is the "after the claim commits" row.',
        '"claim in flight": a runtime that holds its own database connection (SDK direct transport, `scripts/proof/children/claim-in-flight.ts`) is killed while its claim statement waits inside PostgreSQL on a lock the proof holds (seen in pg_stat_activity); the proof then releases the lock and waits until the orphaned backend has ended. PostgreSQL does not notice a dead client while a statement runs (client_connection_check_interval is not set), so the orphaned claim commits: the key is pending with nothing sent, the restarted runtime skips it, and the reconciler makes it unknown after the settle window; support resolves it ("not sent") and the next forced replay sends it. Not lost and never sent twice, but a human is needed: setting client_connection_check_interval on the app role would let PostgreSQL abort such statements (the outcome would then be "nothing").',
        '"after the provider answered": the sandbox keeps the message under the provider idempotency key, but the reconciler looks messages up by receipt (message id) only, and the receipt never reached the ledger; the sandbox offers no receipt hint (SMTP does: the Message-ID derived from the idempotency key). So the key becomes unknown with the lookup gap as evidence, for support (S4), and is never resent. The raw response reaches the ledger with the outcome report (R1: one request, stored in the same transaction), so no point lies between "response stored" and "outcome written".',
      ],
    },
  };
}

export const proof: ProofPart = async (ctx) => (await runCrashMatrix(ctx)).section;
