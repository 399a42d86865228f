// Faults: provider and database faults (issue 6). Every effect goes through the SDK: over the agent
// API's route handlers (HTTP transport) for the provider faults, through the direct transport (the
// same operations) on a client of its own for the database faults. The sandbox provider and the test
// SMTP server (tests/helpers/smtp-server.ts) count what each recipient got. For each fault: the end
// states, whether the raw response was kept (R1), no done without a receipt of a delivered message
// (S2), and no duplicate (S4: unknowns are never resent; a restarted runtime skips them).
import pg from 'pg';
import { createDb, sqlPool, type Db } from '@/lib/db/client.ts';
import { createLedger, type EffectResult, type EffectSpec, type Ledger } from '@/lib/sdk/client.ts';
import { httpTransport } from '@/lib/sdk/http.ts';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { LedgerApiError } from '@/lib/sdk/errors.ts';
import { SandboxProvider, startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import '@/lib/providers/sandbox/register.ts';
import { reconcileOnce } from '@/lib/replay/reconcile.ts';
import { BASE, makeKey, routeFetch } from '@/tests/integration/api-support.ts';
import { makeRun, makeTool, runtimeActor } from '@/tests/helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '@/tests/helpers/smtp-server.ts';
import { smtpRegistry } from '@/tests/integration/replay-fixtures.ts';
import type { ProofContext, ProofPart, ProofRow, ProofSection } from '../section.ts';
import {
  countBy,
  expireLeases,
  fmtCounts,
  openFaultDb,
  startApiServer,
  until,
  type FaultDb,
} from '../support/faults-harness.ts';

export interface FaultResult {
  name: string;
  tried: string;
  trials: number;
  /** End state per key, in order of the phases named in `phases`. */
  phases: { label: string; states: Record<string, number> }[];
  /** Responses the provider gave that are stored verbatim with the attempt (R1), of those expected. */
  rawKept: number;
  rawExpected: number;
  deliveries: number;
  lost: number;
  duplicated: number;
  violations: string[];
  extra: string[];
}

interface Env {
  ctx: ProofContext;
  fdb: FaultDb;
  sandbox: Sandbox;
  provider: SandboxProvider;
  ledger: Ledger;
  tool: string;
  smtpTool: string;
  trials: number;
  dbTrials: number;
}

const PAYLOAD = { subject: 'Welcome', body: 'Hello' };
/** How the SDK saw a failed call: the API's status and error code (the cause is in the server log). */
const errText = (e: unknown) =>
  e instanceof LedgerApiError ? `error ${e.status} ${e.code}` : `error ${(e as Error).name}`;
let seq = 0;
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`;

async function newRun(env: Env, tool = env.tool) {
  const { runId } = await makeRun(env.fdb.db);
  return (target: string, record = `rec-${target}`): EffectSpec => ({
    run: runId,
    tool,
    action: 'campaign_welcome',
    record,
    target,
  });
}

const send = (
  env: Env,
  spec: EffectSpec,
  provider: SandboxProvider = env.provider,
  ledger: Ledger = env.ledger,
  timeoutMs?: number,
) =>
  ledger.effect(
    spec,
    ({ idempotencyKey, key, epoch, signal }) =>
      provider.send({ key, epoch, idempotencyKey, target: spec.target, payload: PAYLOAD }, signal),
    { provider, timeoutMs },
  );

async function stateOf(
  env: Env,
  spec: EffectSpec,
): Promise<{ state: string; receipt: string | null; key: string | null }> {
  // By record as well as target: a scenario may give one target two records (two keys), and a lookup by
  // target alone would answer for either of them.
  const r = await env.fdb.owner.query<{ key: string; state: string | null; receipt: string | null }>(
    `SELECT k.key, e.state::text AS state, e.receipt
       FROM effect_key k LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
      WHERE k.run_id = $1 AND k.target = $2 AND k.record_id = $3`,
    [spec.run, spec.target.toLowerCase(), spec.record],
  );
  const s = r.rows[0];
  return s
    ? { state: s.state ?? 'orphan', receipt: s.receipt, key: s.key }
    : { state: 'none', receipt: null, key: null };
}

async function attempts(env: Env, key: string | null) {
  if (!key) return [];
  return (
    await env.fdb.owner.query<{ status: number | null; has_body: boolean; responded: boolean }>(
      `SELECT response_status AS status, response_body IS NOT NULL AS has_body, responded_at IS NOT NULL AS responded FROM attempt WHERE key = $1 ORDER BY started_at`,
      [key],
    )
  ).rows;
}

/** The checks every fault shares, for one key at the end: lost, duplicated, done with a delivered receipt. */
function judge(
  r: FaultResult,
  target: string,
  final: { state: string; receipt: string | null },
  delivered: { messageId: string }[],
  receiptOk?: (receipt: string) => boolean,
) {
  const n = delivered.length;
  r.deliveries += n;
  if (n > 1) r.duplicated += n - 1;
  if (final.state === 'none' || final.state === 'orphan') {
    if (n > 0) r.lost++;
    if (final.state === 'orphan') r.lost++;
  } else if (n > 0 && final.state !== 'done' && final.state !== 'unknown') r.lost++;
  if (final.state === 'done') {
    const ok =
      final.receipt && (receiptOk ? receiptOk(final.receipt) : delivered.some((d) => d.messageId === final.receipt));
    if (!ok) {
      r.lost++;
      r.violations.push(`${target}: done with receipt ${final.receipt} that is no delivered message (S2)`);
    }
  }
}

function result(name: string, tried: string, trials: number): FaultResult {
  return {
    name,
    tried,
    trials,
    phases: [],
    rawKept: 0,
    rawExpected: 0,
    deliveries: 0,
    lost: 0,
    duplicated: 0,
    violations: [],
    extra: [],
  };
}

const expectState = (r: FaultResult, target: string, phase: string, got: string, want: string) => {
  if (got !== want) r.violations.push(`${target}: ${phase} ${got}, expected ${want}`);
};

/** One sandbox failure mode: first send, the raw response check, then a restarted runtime sends again. */
async function sandboxMode(
  env: Env,
  name: string,
  tried: string,
  mode: Parameters<Sandbox['failNext']>[0],
  want: { first: string; status: number | null; deliveredFirst: number; afterRestart: string },
  timeoutMs?: number,
): Promise<FaultResult> {
  const r = result(name, tried, env.trials);
  const spec = await newRun(env);
  const first: string[] = [];
  const second: string[] = [];
  for (let i = 0; i < env.trials; i++) {
    const s = spec(`${name}-${i}-${uniq()}@faults.example.com`);
    env.sandbox.failNext(mode, { to: s.target });
    const a = await send(env, s, env.provider, env.ledger, timeoutMs);
    const st1 = await stateOf(env, s);
    first.push(st1.state);
    expectState(r, s.target, 'after the fault', st1.state, want.first);
    if (a.status !== want.first) r.violations.push(`${s.target}: the SDK returned ${a.status}, expected ${want.first}`);
    if (env.sandbox.deliveriesTo(s.target).length !== want.deliveredFirst)
      r.violations.push(`${s.target}: ${env.sandbox.deliveriesTo(s.target).length} deliveries after the fault`);
    if (want.status !== null) {
      r.rawExpected++;
      const at = await attempts(env, st1.key);
      if (at[0]?.status === want.status && at[0].has_body) r.rawKept++;
      else r.violations.push(`${s.target}: raw response not kept (R1): ${JSON.stringify(at[0])}`);
    } else {
      const at = await attempts(env, st1.key);
      if (at[0]?.responded) r.violations.push(`${s.target}: a response was recorded although none came`);
    }
    // A restarted runtime (or the next run of the same event) runs the same effect again.
    const b = await send(env, s);
    const st2 = await stateOf(env, s);
    second.push(b.status === 'skipped' ? `skipped (${b.state})` : b.status);
    expectState(r, s.target, 'after the restart', st2.state, want.afterRestart);
    judge(r, s.target, st2, env.sandbox.deliveriesTo(s.target));
  }
  r.phases.push(
    { label: 'after the fault', states: countBy(first, (x) => x) },
    { label: 'same key again', states: countBy(second, (x) => x) },
  );
  return r;
}

/** R3: body-hash dedup pointing at a delivered prior message: the second key is done with its receipt. */
async function alreadyExistedDelivered(env: Env): Promise<FaultResult> {
  const r = result(
    'already-existed-delivered',
    'already_existed pointer at a delivered prior message (body-hash dedup)',
    env.trials,
  );
  const dedup = await startSandbox({ bodyHashDedup: true });
  try {
    const p = new SandboxProvider(dedup.url);
    const spec = await newRun(env);
    const states: string[] = [];
    for (let i = 0; i < env.trials; i++) {
      const target = `dedup-${i}-${uniq()}@faults.example.com`;
      const a = spec(target, `order-a-${i}`);
      const b = spec(target, `order-b-${i}`); // another record, same content: the provider answers with a pointer
      await send(env, a, p);
      await send(env, b, p);
      const sa = await stateOf(env, a);
      const sb = await stateOf(env, b);
      states.push(`${sa.state}+${sb.state}`);
      expectState(r, target, 'first/second', `${sa.state}+${sb.state}`, 'done+done');
      if (sa.receipt !== sb.receipt) r.violations.push(`${target}: the pointer was not followed to the prior receipt`);
      r.rawExpected++;
      const at = await attempts(env, sb.key);
      if (at[0]?.status === 200 && at[0].has_body) r.rawKept++;
      judge(r, target, sb, dedup.deliveriesTo(target));
    }
    r.phases.push({ label: 'first + second key', states: countBy(states, (x) => x) });
  } finally {
    await dedup.stop();
  }
  return r;
}

/** The runtime died after storing the raw response (R1); the provider's lookup lags (C1, C2). */
async function laggingLookup(env: Env, visibleInTime: boolean): Promise<FaultResult> {
  const r = visibleInTime
    ? result(
        'lookup-lag-inside',
        'lagging lookup: message not visible inside the settle window, visible later (runtime died after storing the response)',
        env.trials,
      )
    : result(
        'lookup-lag-after',
        'lagging lookup: message still not visible after the settle window (runtime died after storing the response)',
        env.trials,
      );
  const sandbox = await startSandbox({ settleLagMs: 3_600_000 });
  try {
    const provider = new SandboxProvider(sandbox.url);
    const spec = await newRun(env);
    const specs = Array.from({ length: env.trials }, (_, i) =>
      spec(`lag-${visibleInTime ? 'in' : 'out'}-${i}-${uniq()}@faults.example.com`),
    );
    const transport = env.ledger.transport;
    for (const s of specs) {
      const claim = await transport.claim({
        runId: s.run,
        tool: s.tool,
        action: s.action,
        recordId: s.record,
        target: s.target,
      });
      if (!claim.claimed) throw new Error('fresh key not claimable');
      const raw = await provider.send({
        key: claim.key,
        epoch: claim.epoch,
        idempotencyKey: claim.idempotencyKey,
        target: s.target,
        payload: PAYLOAD,
      });
      await transport.recordResponse(claim.attemptId, raw);
      // ... and the process died here: no outcome reported.
    }
    await expireLeases(env.fdb.owner, specs[0]!.run);
    const registry = (settleWindowSeconds: number) =>
      new ProviderRegistry({ sandbox: { type: 'sandbox', url: sandbox.url, settleWindowSeconds } });
    const inside = await reconcileOnce({ db: env.fdb.db, providers: registry(3600), limit: 10_000 });
    const afterInside = await Promise.all(specs.map((s) => stateOf(env, s)));
    r.phases.push({ label: 'lookup 404 inside the window', states: countBy(afterInside, (x) => x.state) });
    if (inside.waiting !== env.trials) r.violations.push(`inside the window: ${JSON.stringify(inside)}`);
    if (visibleInTime) sandbox.setSettleLag(0);
    const after = await reconcileOnce({ db: env.fdb.db, providers: registry(visibleInTime ? 3600 : 0), limit: 10_000 });
    r.extra.push(`reconciler: ${inside.waiting} waiting, then ${after.done} done / ${after.unknown} unknown`);
    let evidence404 = 0;
    for (const s of specs) {
      const st = await stateOf(env, s);
      expectState(r, s.target, 'after reconciliation', st.state, visibleInTime ? 'done' : 'unknown');
      if (!visibleInTime) {
        const tr = await env.fdb.owner.query<{ evidence: { lookup?: { status?: number } } }>(
          `SELECT evidence FROM effect_transition WHERE key = $1 ORDER BY id DESC LIMIT 1`,
          [st.key],
        );
        if (tr.rows[0]?.evidence?.lookup?.status === 404) evidence404++;
      }
      r.rawExpected++;
      const at = await attempts(env, st.key);
      if (at[0]?.status === 201 && at[0].has_body) r.rawKept++;
    }
    if (!visibleInTime) {
      r.extra.push(
        `the lookup miss (404) kept as evidence for support: ${evidence404}/${env.trials}; never revoked (S5)`,
      );
      if (evidence404 !== env.trials) r.violations.push('lookup miss evidence missing');
    }
    r.phases.push({
      label: 'after reconciliation',
      states: countBy(await Promise.all(specs.map((s) => stateOf(env, s))), (x) => x.state),
    });
    // A restarted runtime: nothing goes out again.
    const again: string[] = [];
    for (const s of specs) {
      const b = await send(env, s, provider);
      again.push(b.status === 'skipped' ? `skipped (${b.state})` : b.status);
      judge(r, s.target, await stateOf(env, s), sandbox.deliveriesTo(s.target));
    }
    r.phases.push({ label: 'same key again', states: countBy(again, (x) => x) });
  } finally {
    await sandbox.stop();
  }
  return r;
}

/** SMTP server refusing connections: nothing was sent, the key is freed (S3), and goes out once it is back. */
async function smtpRefused(env: Env, smtp: TestSmtpServer): Promise<FaultResult> {
  const r = result('smtp-refused', 'SMTP connection refused (server down), then back', env.trials);
  const registry = smtpRegistry(smtp);
  try {
    const provider = registry.get('smtp');
    const spec = await newRun(env, env.smtpTool);
    const specs = Array.from({ length: env.trials }, (_, i) => spec(`smtp-${i}-${uniq()}@faults.example.com`));
    const sendSmtp = (s: EffectSpec) =>
      env.ledger.send(provider, s, { subject: 'Welcome', text: 'Hello' }, { timeoutMs: 10_000 });
    await smtp.refuseConnections();
    const first: EffectResult[] = [];
    try {
      for (const s of specs) first.push(await sendSmtp(s));
    } finally {
      await smtp.acceptConnections();
    }
    const notSent = first.filter(
      (x) => x.status === 'failed' && (x as { evidence: Record<string, unknown> }).evidence.providerSent === 'no',
    ).length;
    r.extra.push(`refused: failed with providerSent "no" ${notSent}/${env.trials}`);
    if (notSent !== env.trials) r.violations.push(`refused sends: ${JSON.stringify(countBy(first, (x) => x.status))}`);
    r.phases.push({
      label: 'while refused',
      states: countBy(await Promise.all(specs.map((s) => stateOf(env, s))), (x) => x.state),
    });
    const second: string[] = [];
    for (const s of specs) {
      const b = await sendSmtp(s);
      second.push(b.status === 'skipped' ? `skipped (${b.state})` : b.status);
    }
    const third: string[] = [];
    for (const s of specs) {
      const c = await sendSmtp(s);
      third.push(c.status === 'skipped' ? `skipped (${c.state})` : c.status);
    }
    r.phases.push(
      { label: 'server back', states: countBy(second, (x) => x) },
      { label: 'same key again', states: countBy(third, (x) => x) },
    );
    const counts = smtp.countByRecipient();
    for (const s of specs) {
      const st = await stateOf(env, s);
      expectState(r, s.target, 'final', st.state, 'done');
      const mine = smtp.messages.filter((m) => m.to.includes(s.target));
      r.rawExpected++;
      const at = await attempts(env, st.key);
      if (at.some((a) => a.status === 250 && a.has_body)) r.rawKept++;
      judge(
        r,
        s.target,
        st,
        mine.map((m) => ({ messageId: `${m.messageId} queue=${m.queueId}` })),
      );
      if ((counts.get(s.target) ?? 0) !== 1) r.violations.push(`${s.target}: ${counts.get(s.target) ?? 0} messages`);
    }
  } finally {
    await registry.close();
  }
  return r;
}

/** The app's connection pool is exhausted: the claim waits in the pool's queue, writes nothing and
 *  calls nothing, and completes once a connection is free. */
async function poolExhausted(env: Env): Promise<FaultResult> {
  const r = result(
    'pool-exhausted',
    'app connection pool exhausted (every connection held), then released',
    env.dbTrials,
  );
  const db = createDb(env.fdb.appUrl, 2);
  try {
    const ledger = createLedger(directTransport({ db, actor: runtimeActor() }));
    const pool = sqlPool(db)!;
    const spec = await newRun(env);
    const whileHeld: string[] = [];
    const results: string[] = [];
    for (let i = 0; i < env.dbTrials; i++) {
      const s = spec(`pool-${i}-${uniq()}@faults.example.com`);
      const held = await Promise.all([pool.connect(), pool.connect()]);
      const requestsBefore = env.sandbox.requests();
      const pending = send(env, s, env.provider, ledger);
      try {
        await until('the claim queued for a connection', async () => pool.waitingCount > 0, 10_000, 5);
        const st = await stateOf(env, s);
        whileHeld.push(st.state);
        expectState(r, s.target, 'while the pool is exhausted', st.state, 'none');
        if (env.sandbox.requests() !== requestsBefore)
          r.violations.push(`${s.target}: the provider was called while the claim had no connection`);
      } finally {
        for (const c of held) c.release();
      }
      const a = await pending.catch((e: Error) => ({ status: `error: ${e.message}` }) as unknown as EffectResult);
      results.push(a.status);
      const st = await stateOf(env, s);
      expectState(r, s.target, 'once capacity returned', st.state, 'done');
      r.rawExpected++;
      const at = await attempts(env, st.key);
      if (at[0]?.status === 201 && at[0].has_body) r.rawKept++;
      judge(r, s.target, st, env.sandbox.deliveriesTo(s.target));
    }
    r.phases.push(
      { label: 'while exhausted', states: countBy(whileHeld, (x) => x) },
      { label: 'once released', states: countBy(results, (x) => x) },
    );
  } finally {
    await db.$disconnect();
  }
  return r;
}

/** The database refuses new connections (connection limit of the database reached): the claim fails
 *  with an error, nothing is written, nothing is sent; once the limit is lifted the same effect goes out. */
async function connectionsRefused(env: Env): Promise<FaultResult> {
  const r = result(
    'db-connections-refused',
    'database refuses new connections (CONNECTION LIMIT 0: "too many connections"), then accepts',
    env.dbTrials,
  );
  const dbName = new URL(env.fdb.ownerUrl).pathname.slice(1);
  const admin = await env.fdb.owner.connect(); // an open connection: unaffected by the limit
  const spec = await newRun(env);
  const errors: string[] = [];
  const after: string[] = [];
  let firstError = '';
  try {
    for (let i = 0; i < env.dbTrials; i++) {
      const s = spec(`connlimit-${i}-${uniq()}@faults.example.com`);
      await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(dbName)} CONNECTION LIMIT 0`);
      const db = createDb(env.fdb.appUrl, 2); // a process starting while the database is full
      try {
        const ledger = createLedger(directTransport({ db, actor: runtimeActor() }));
        const requestsBefore = env.sandbox.requests();
        const a = await send(env, s, env.provider, ledger).then((x) => `returned ${x.status}`, errText);
        errors.push(a.startsWith('error') ? 'error' : a);
        if (a.startsWith('error') && !firstError) firstError = a;
        if (!a.startsWith('error'))
          r.violations.push(`${s.target}: no error while the database refused connections (${a})`);
        if (env.sandbox.requests() !== requestsBefore) r.violations.push(`${s.target}: the provider was called`);
        await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(dbName)} CONNECTION LIMIT -1`);
        const st = await stateOf(env, s);
        expectState(r, s.target, 'after the refused claim', st.state, 'none');
        const b = await send(env, s, env.provider, ledger);
        after.push(b.status);
        const st2 = await stateOf(env, s);
        expectState(r, s.target, 'once connections are accepted', st2.state, 'done');
        r.rawExpected++;
        const at = await attempts(env, st2.key);
        if (at[0]?.status === 201 && at[0].has_body) r.rawKept++;
        judge(r, s.target, st2, env.sandbox.deliveriesTo(s.target));
      } finally {
        await db.$disconnect();
      }
    }
  } finally {
    await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(dbName)} CONNECTION LIMIT -1`).catch(() => undefined);
    admin.release();
  }
  if (firstError) r.extra.push(`the SDK got ${firstError}`);
  r.phases.push(
    { label: 'while refused', states: countBy(errors, (x) => x) },
    { label: 'once accepted', states: countBy(after, (x) => x) },
  );
  return r;
}

/** Statement timeouts on the app's connections while a lock holds the claim, then the outcome. */
async function statementTimeouts(env: Env, at: 'claim' | 'outcome'): Promise<FaultResult> {
  const r =
    at === 'claim'
      ? result(
          'statement-timeout-claim',
          'statement timeout on the claim (statement_timeout 300 ms, the insert held by a table lock), then unblocked',
          env.dbTrials,
        )
      : result(
          'statement-timeout-outcome',
          'statement timeout on the outcome after the provider accepted (statement_timeout 300 ms, effect rows locked), then reconciliation',
          env.dbTrials,
        );
  const url = new URL(env.fdb.appUrl);
  url.searchParams.set('options', '-c statement_timeout=300');
  const db: Db = createDb(url.toString(), 4);
  const blocker = await env.fdb.owner.connect();
  const spec = await newRun(env);
  const specs: EffectSpec[] = [];
  const first: string[] = [];
  try {
    const ledger = createLedger(directTransport({ db, actor: runtimeActor() }));
    for (let i = 0; i < env.dbTrials; i++) {
      const s = spec(`stmt-${at}-${i}-${uniq()}@faults.example.com`);
      specs.push(s);
      const requestsBefore = env.sandbox.requests();
      let outcome: string;
      if (at === 'claim') {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE effect_key IN EXCLUSIVE MODE'); // reads pass, the claim's insert waits
        // If the timeout did not fire, the lock goes after 10 s so the run cannot hang (and it is reported).
        const safety = setTimeout(() => void blocker.query('ROLLBACK').catch(() => undefined), 10_000);
        try {
          outcome = await send(env, s, env.provider, ledger).then((x) => `returned ${x.status}`, errText);
        } finally {
          clearTimeout(safety);
          await blocker.query('ROLLBACK');
        }
        if (env.sandbox.requests() !== requestsBefore) r.violations.push(`${s.target}: the provider was called`);
        expectState(r, s.target, 'after the timed-out claim', (await stateOf(env, s)).state, 'none');
      } else {
        let locked = false;
        let safety: NodeJS.Timeout | undefined;
        outcome = await ledger
          .effect(
            s,
            async ({ idempotencyKey, key, epoch, signal }) => {
              // The claim committed; now the database is busy: updates of effect rows wait past the timeout.
              await blocker.query('BEGIN');
              await blocker.query('LOCK TABLE effect IN EXCLUSIVE MODE');
              locked = true;
              safety = setTimeout(() => void blocker.query('ROLLBACK').catch(() => undefined), 10_000);
              return env.provider.send({ key, epoch, idempotencyKey, target: s.target, payload: PAYLOAD }, signal);
            },
            { provider: env.provider },
          )
          .then((x) => `returned ${x.status}`, errText);
        clearTimeout(safety);
        if (locked) await blocker.query('ROLLBACK');
        const st = await stateOf(env, s);
        expectState(r, s.target, 'after the timed-out outcome', st.state, 'pending');
        const a = await attempts(env, st.key);
        r.rawExpected++;
        if (a[0]?.status === 201 && a[0].has_body)
          r.rawKept++; // stored before the outcome failed (R1)
        else r.violations.push(`${s.target}: raw response not kept: ${JSON.stringify(a[0])}`);
      }
      first.push(outcome);
      if (!outcome.startsWith('error'))
        r.violations.push(`${s.target}: no error under the statement timeout (${outcome})`);
    }
    r.phases.push({
      label: at === 'claim' ? 'claim under the lock' : 'outcome under the lock',
      states: countBy(first, (x) => x),
    });
    if (at === 'claim') {
      const again: string[] = [];
      for (const s of specs) again.push((await send(env, s, env.provider, ledger)).status);
      r.phases.push({ label: 'once unblocked', states: countBy(again, (x) => x) });
    } else {
      const restart: string[] = [];
      for (const s of specs) {
        const b = await send(env, s, env.provider, ledger);
        restart.push(b.status === 'skipped' ? `skipped (${b.state})` : b.status);
      }
      r.phases.push({ label: 'restarted runtime', states: countBy(restart, (x) => x) });
      await expireLeases(env.fdb.owner, specs[0]!.run);
      const rec = await reconcileOnce({
        db: env.fdb.db,
        providers: new ProviderRegistry({ sandbox: { type: 'sandbox', url: env.sandbox.url, settleWindowSeconds: 0 } }),
        limit: 10_000,
      });
      r.extra.push(`reconciler: ${rec.done} done from the stored receipt, ${rec.unknown} unknown`);
    }
    for (const s of specs) {
      const st = await stateOf(env, s);
      expectState(r, s.target, 'final', st.state, 'done');
      if (at === 'claim') {
        r.rawExpected++;
        const a = await attempts(env, st.key);
        if (a[0]?.status === 201 && a[0].has_body) r.rawKept++;
      }
      judge(r, s.target, st, env.sandbox.deliveriesTo(s.target));
    }
    r.phases.push({
      label: 'final',
      states: countBy(await Promise.all(specs.map((s) => stateOf(env, s))), (x) => x.state),
    });
  } finally {
    await blocker.query('ROLLBACK').catch(() => undefined);
    blocker.release();
    await db.$disconnect();
  }
  return r;
}

export async function runProviderFaults(ctx: ProofContext): Promise<{ section: ProofSection; faults: FaultResult[] }> {
  const full = ctx.scale === 'full';
  const fdb = await openFaultDb(ctx, 10);
  const sandbox = await startSandbox({ holdMs: 5_000 });
  const smtp = await startTestSmtpServer();
  const api = await startApiServer(fdb.db); // sets the API's database; routeFetch dispatches in process
  const faults: FaultResult[] = [];
  try {
    const key = await makeKey(fdb.db);
    const env: Env = {
      ctx,
      fdb,
      sandbox,
      provider: new SandboxProvider(sandbox.url),
      ledger: createLedger(httpTransport({ baseUrl: BASE, runtimeKey: key.token, fetch: routeFetch })),
      tool: (await makeTool(fdb.db, { provider: 'sandbox' })).name,
      smtpTool: (await makeTool(fdb.db, { provider: 'smtp' })).name,
      trials: full ? 100 : 3,
      dbTrials: full ? 25 : 2,
    };
    const step = async (f: () => Promise<FaultResult>) => {
      const r = await f();
      faults.push(r);
      ctx.log(
        `provider faults: ${r.name}, ${r.trials} trials, lost ${r.lost}, duplicated ${r.duplicated}, unexpected ${r.violations.length}`,
      );
    };
    await step(() =>
      sandboxMode(env, 'reject', 'provider rejects (422)', 'reject', {
        first: 'failed',
        status: 422,
        deliveredFirst: 0,
        afterRestart: 'done',
      }),
    );
    await step(() =>
      sandboxMode(env, 'server-error', 'provider 5xx before sending (500)', 'server_error', {
        first: 'unknown',
        status: 500,
        deliveredFirst: 0,
        afterRestart: 'unknown',
      }),
    );
    await step(() =>
      sandboxMode(env, 'server-error-after-send', 'provider 5xx after sending (502)', 'server_error_after_send', {
        first: 'unknown',
        status: 502,
        deliveredFirst: 1,
        afterRestart: 'unknown',
      }),
    );
    await step(() =>
      sandboxMode(
        env,
        'timeout-after-accept',
        'provider accepts and never answers (client timeout 250 ms)',
        'timeout_after_accept',
        { first: 'unknown', status: null, deliveredFirst: 1, afterRestart: 'unknown' },
        250,
      ),
    );
    await step(() => laggingLookup(env, true));
    await step(() => laggingLookup(env, false));
    await step(() =>
      sandboxMode(
        env,
        'already-existed-failed',
        'already_existed pointer at a permanently failed prior message',
        'already_existed_failed',
        { first: 'stuck', status: 200, deliveredFirst: 0, afterRestart: 'stuck' },
      ),
    );
    await step(() => alreadyExistedDelivered(env));
    await step(() =>
      sandboxMode(env, 'lost-token', 'one-shot completion token issued and lost', 'completion_token', {
        first: 'stuck',
        status: 201,
        deliveredFirst: 0,
        afterRestart: 'stuck',
      }),
    );
    await step(() => smtpRefused(env, smtp));
    await step(() => poolExhausted(env));
    await step(() => connectionsRefused(env));
    await step(() => statementTimeouts(env, 'claim'));
    await step(() => statementTimeouts(env, 'outcome'));
  } finally {
    await api.close();
    await smtp.close();
    await sandbox.stop();
    await fdb.close();
  }
  const rows: ProofRow[] = faults.map((f) => ({
    tried: f.tried,
    trials: f.trials,
    lost: f.lost,
    duplicated: f.duplicated,
    unauthorized: 0,
    observed: [
      ...f.phases.map((p) => `${p.label}: ${fmtCounts(p.states)}`),
      ...f.extra,
      f.rawExpected
        ? `raw response kept (R1) ${f.rawKept}/${f.rawExpected}`
        : 'no response to keep (evidence: the timeout)',
      `deliveries ${f.deliveries}`,
      `unexpected: ${f.violations.length}`,
    ].join('; '),
  }));
  return {
    faults,
    section: {
      title: 'Faults: providers and the database',
      proves: 'S2, S3, S4, S5, S6, R1, R3, C1, C2',
      rows,
      notes: [
        'Provider faults go through the SDK over the agent API route handlers (HTTP transport) against the sandbox provider (failure modes on demand) and the test SMTP server; database faults through the SDK direct transport on a client of their own. "same key again" is what a restarted runtime or the next run of the same event does: skipped unless the key was freed (failed, S3).',
        'Lagging lookups: the runtime dies after storing the raw response; the reconciler runs with the lease expired, first inside the settle window (3600 s: a 404 is no evidence, C2), then with the message visible (done from the stored receipt, C1) or with the window passed and the message still invisible (unknown with the 404 as evidence; never revoked, S5). The clock is injected (lease in the past, settle window as a provider setting).',
        'Pool exhausted: node-postgres queues a request for a connection without a deadline, so the claim waits (nothing written, provider not called) and completes when a connection is released; the product sets no acquisition timeout. Database refusing connections (CONNECTION LIMIT 0 on the proof database) and statement timeouts (statement_timeout 300 ms while a lock holds the table) fail with an error and leave no half state: no effect row after a failed claim; after a failed outcome the key stays pending with the raw response stored, the restarted runtime skips it and the reconciler completes it from the stored receipt.',
        'Database faults reach the SDK as the API\'s 500 "internal error: the request may or may not have taken effect" (the cause, "too many connections for database" or "canceling statement due to statement timeout", is in the server log); the SDK throws, so the agent sees the failure.',
        'lost: a delivery the ledger holds neither as done nor unknown, a done whose receipt is no delivered message (S2), a key with no state. duplicated: deliveries beyond one per key, counted at the sandbox or the SMTP server.',
      ],
    },
  };
}

export const proof: ProofPart = async (ctx) => (await runProviderFaults(ctx)).section;
