// The replay executor: one chunk job = a range of frozen replay items. For each item:
//   1. re-read the target's state; one that changed since confirmation is skipped and reported (F4),
//   2. wait for the provider's rate limit, then claim through the ledger like the runtime does (F3):
//      a lost claim sends nothing,
//   3. send with the (key, epoch) idempotency key (R2), store the raw response before parsing (R1),
//      then done with the receipt (S2), failed or stuck with the response as evidence (S3, S6).
// A call that provably sent nothing (connection refused) frees the key as failed and fails the job,
// which pg-boss retries: the replay stops and retries cleanly. An ambiguous call (timeout after the
// data went out, 5xx) stays pending for the reconciler, never retried (S4).
import type { Db } from '../db/client.ts';
import { env } from '../env.ts';
import { Prisma, sqlPool } from '../db/client.ts';
import { appendAudit } from '../audit/append.ts';
import {
  allowedSources,
  checkTransition,
  completeEffect,
  deriveKey,
  getRun,
  getTool,
  LedgerError,
  partyOf,
  requestJson,
  type Actor,
} from '../ledger/index.ts';
import type { ProviderRegistry, RegisteredProvider } from '../providers/registry.ts';
import { isCallFailure } from '../providers/types.ts';
import type { RawResponse } from '../providers/types.ts';
import { type RateLimiter } from './rate-limit.ts';
import { exactlyOnce, FINGERPRINT_SQL, type ViewState } from './set.ts';
import type { ReplayChunk } from './jobs.ts';

export type ItemOutcome = 'sent' | 'skipped' | 'failed' | 'unknown' | 'interrupted';

export interface ExecutorDeps {
  db: Db;
  providers: ProviderRegistry;
  limiter?: RateLimiter;
  /** Items of one chunk sent at the same time (each still claims on its own). */
  itemConcurrency?: number;
  /** Content of a replayed message; defaults to a neutral text naming the action and record. */
  payload?: (item: { tool: string; action: string; recordId: string; target: string }) => Record<string, unknown>;
  log?: (line: string) => void;
}

export function executorActor(replayId: string): Actor {
  return { kind: 'executor', id: `replay:${replayId}`, label: `replay executor ${replayId}` };
}

/** Thrown to fail the chunk job so pg-boss retries it later (the provider is unreachable). */
export class RetryChunk extends Error {}

/** The database is unreachable or went away mid-statement (restart, failover, network): worth
 *  retrying after a pause, unlike a constraint or a bug. */
export function isConnectionLoss(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (
    typeof e?.code === 'string' &&
    (/^08/.test(e.code) ||
      ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(e.code))
  )
    return true;
  return /Connection terminated|connection (is )?closed|ECONNREFUSED|ECONNRESET|terminating connection|the database system is (starting up|shutting down)|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    e?.message ?? '',
  );
}

/** Bounded exponential backoff: 0.25 s doubling to at most `capMs`, with jitter. */
export function backoffMs(attempt: number, capMs = 30_000, baseMs = 250): number {
  const ms = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

/** After a send the provider's answer exists only in this process: its statement is retried through a
 *  database outage or a statement timeout (bounded backoff, up to `forMs`), so a restart does not turn a delivery into an
 *  unknown. A retry that finds the state already moved by this same statement (the first attempt
 *  committed, its reply was lost) counts as applied. */
async function persistThroughOutage<T>(
  what: string,
  fn: () => Promise<T>,
  log?: (l: string) => void,
  forMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const timedOut = (error as { code?: string }).code === '57014'; // statement timeout: a lock held elsewhere
      if ((!isConnectionLoss(error) && !timedOut) || Date.now() > deadline) throw error;
      if (attempt === 0) log?.(`${what}: ${(error as Error).message}; retrying`);
      await new Promise((r) => setTimeout(r, backoffMs(attempt, 5_000, 100)));
    }
  }
}

const defaultPayload = (i: { action: string; recordId: string }) => {
  const text = `This message was sent again by an operator's replay (${i.action}, record ${i.recordId}).`;
  return { subject: `${i.action.replace(/_/g, ' ')}`, text, body: text };
};

/** Rows of one window of a chunk: everything an item needs, read in one query. */
interface ItemRow {
  id: string;
  key: string;
  target: string;
  note: string | null;
  tool: string;
  action: string;
  record_id: string;
  view_state: ViewState;
  changed_by: string | null;
  fp: string;
  receipt: string | null;
  ours: boolean;
}

type Query = <R>(sql: string, params: unknown[], name?: string) => Promise<R[]>;

const TRACE = env().REPLAY_TRACE;
const spans = new Map<string, { n: number; ms: number }>();
function span(name: string, t0: number) {
  if (!TRACE) return;
  const s = spans.get(name) ?? { n: 0, ms: 0 };
  s.n++;
  s.ms += performance.now() - t0;
  spans.set(name, s);
}
if (TRACE)
  setInterval(() => {
    if (spans.size)
      console.error(
        `[trace ${process.pid}] ` +
          [...spans].map(([k, v]) => `${k} n=${v.n} avg=${(v.ms / v.n).toFixed(1)}ms`).join(' | '),
      );
    spans.clear();
  }, 5000).unref();

/** The hot path talks to the node-postgres pool under the Prisma client (the same pool the ledger's
 *  claim uses): Prisma's per-query cost was a third of the executor's CPU. */
export function sqlOf(db: Db): Query {
  const pool = sqlPool(db);
  // Named statements are parsed and planned once per connection (the hot ones are large CTEs).
  if (pool)
    return async <R>(sql: string, params: unknown[], name?: string) =>
      (await pool.query(name ? { name, text: sql, values: params } : { text: sql, values: params })).rows as R[];
  return <R>(sql: string, params: unknown[]) => db.$queryRawUnsafe<R[]>(sql, ...params);
}

// The window's plan must not depend on statistics: a replay's items and its plan items are bulk-inserted
// just before the run, before any ANALYZE, and with no statistics the planner intersected the
// run's whole plan_item index with the key's for every item (and joined every item of the chunk
// before the LIMIT): 0.4 to 1 s of database CPU per window of 128 on an idle machine, several
// seconds with 16 handlers asking at once, against about 2 ms with statistics. So: the window is
// picked first (primary key range, materialized), and `(x = $n) IS TRUE` keeps the run and replay
// conditions out of index choice (a filter, not an index scan), leaving the key lookups.
export const WINDOW_SQL = `
  WITH w AS MATERIALIZED (
    SELECT ri.id, ri.key, ri.target, ri.note FROM replay_item ri
     WHERE ri.id > $4::bigint AND ri.id <= $5::bigint AND (ri.replay_id = $1::uuid) IS TRUE AND ri.outcome IS NULL
     ORDER BY ri.id LIMIT $6)
  SELECT t.id::text AS id, t.key, t.target, t.note, t.tool, t.action, t.record_id, t.view_state, t.changed_by, t.receipt, t.ours,
         ${FINGERPRINT_SQL.text} AS fp
    FROM (
      SELECT w.id, w.key, w.target, w.note, pi.tool, pi.action, pi.record_id,
             coalesce(k.current_epoch, 1) AS epoch,
             CASE WHEN k.key IS NULL THEN 'not_sent'
                  WHEN k.state = 'pending' AND e.awaiting_claim THEN 'awaiting_claim'
                  WHEN k.state = 'pending' THEN 'in_flight'
                  ELSE k.state::text END AS view_state,
             k.changed_by, k.changed_at, e.receipt,
             EXISTS (SELECT 1 FROM effect_transition tr WHERE tr.key = w.key AND tr.actor_id = $3 AND tr.to_state = 'pending') AS ours
        FROM w
        JOIN LATERAL (SELECT pi.tool, pi.action, pi.record_id FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
                       WHERE pi.key = w.key AND (pi.run_id = $2::uuid) IS TRUE LIMIT 1) pi ON true
        LEFT JOIN effect_key k ON k.key = w.key
        LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch) t
   ORDER BY t.id`;

// The ledger's claim (S1, F3: ledger_claim, the function claimEffect calls, with the key derived the
// same way), gated by the replay's status in the same statement: the lateral call runs only when the
// replay row is still 'running', so a pause or cancel stops every handler before its next claim.
const CLAIM_SQL = `
  SELECT c.claimed, c.epoch, c.state, c.attempt_id, c.idempotency_key, c.changed_by, c.changed_at
    FROM replay r
   CROSS JOIN LATERAL ledger_claim($1, $2, $3, $4, $5, $6::"TargetType", $7, $8::uuid, 'executor'::"ActorKind",
                                   'replay:' || r.id::text, $9, $10::int, $11::jsonb) c
   WHERE r.id = $12::uuid AND r.status = 'running'`;

interface ClaimRow {
  claimed: boolean;
  epoch: number;
  state: string;
  attempt_id: string | null;
  idempotency_key: string;
  changed_by: string;
  changed_at: Date;
}

// R1: the raw response, untouched, with the attempt, before it is classified.
const RESPONSE_SQL = `
  UPDATE attempt SET response_status = $2, response_headers = $3::jsonb, response_body = $4, responded_at = now()
   WHERE id = $1::uuid AND responded_at IS NULL`;

// The item's outcome. An item left 'interrupted' (its claim is ours but no handler finished it) may
// still get its real outcome. `was` tells the caller how the replay's counters move.
const OUTCOME_CTES = `
  prev AS (SELECT ri.id, ri.outcome FROM replay_item ri WHERE ri.id = $1::bigint AND $2::text IS NOT NULL AND (SELECT ok FROM gate) FOR UPDATE),
  upd AS (
    UPDATE replay_item r SET outcome = $2, note = $3
      FROM prev
     WHERE r.id = prev.id AND (prev.outcome IS NULL OR (prev.outcome = 'interrupted' AND $2 <> 'interrupted'))
    RETURNING coalesce(prev.outcome, '-') AS was)`;

// Outside the executor's hot path (the reconciler settling an interrupted item): the counters move in
// the same statement.
const SET_OUTCOME_SQL = `
  WITH gate AS (SELECT true AS ok), ${OUTCOME_CTES},
  rep AS (
    UPDATE replay SET
      sent = sent + (SELECT count(*) FROM upd) * $5::int,
      skipped = skipped + (SELECT count(*) FROM upd) * $6::int,
      failed = failed + (SELECT count(*) FROM upd) * $7::int,
      unknown = unknown + (SELECT count(*) FROM upd) * $8::int - (SELECT count(*) FROM upd WHERE was = 'interrupted')
     WHERE id = $4::uuid AND EXISTS (SELECT 1 FROM upd)
    RETURNING id)
  SELECT (SELECT was FROM upd) AS was`;

// The executor's outcome write: the replay row is not touched per item (every handler updating that
// one row would serialize all sends on its lock, one commit after the other); the handler adds its
// items to the counters in one UPDATE every half second (Tally) and the completion recounts.
const ITEM_OUTCOME_SQL = `WITH gate AS (SELECT true AS ok), ${OUTCOME_CTES} SELECT (SELECT was FROM upd) AS was`;

// The ledger's transition (ledger_transition, what transitionEffect calls: row lock, state re-check,
// transition row and audit entry), the provider's raw response stored untouched with the attempt (R1)
// and the item's outcome, in one statement and one transaction: a state never commits without the
// response that justifies it. The outcome is written only when the transition was accepted.
const TRANSITION_SQL = `
  WITH t AS MATERIALIZED (
    SELECT * FROM ledger_transition($4, $5::int, $6::"EffectState", $7::"EffectState"[], 'executor'::"ActorKind", $8, $9, NULL,
                                    $10, NULL, $11, $12::jsonb, $13::uuid, '{"ip":null,"userAgent":null,"requestId":null}'::jsonb)),
  gate AS (SELECT coalesce((SELECT ok FROM t), false) AS ok),
  resp AS (
    UPDATE attempt SET response_status = $14, response_headers = $15::jsonb, response_body = $16, responded_at = now()
     WHERE id = $13::uuid AND $14::int IS NOT NULL AND responded_at IS NULL
    RETURNING id),
  ${OUTCOME_CTES}
  SELECT t.ok, t.epoch, t.from_state, t.problem, (SELECT was FROM upd) AS was FROM t`;

const counts = (outcome: ItemOutcome) => ({
  sent: outcome === 'sent' ? 1 : 0,
  skipped: outcome === 'skipped' ? 1 : 0,
  failed: outcome === 'failed' ? 1 : 0,
  unknown: outcome === 'unknown' || outcome === 'interrupted' ? 1 : 0,
});

/** Records an item's outcome and moves the replay's counters in the same statement. An item left
 *  'interrupted' (its claim is ours but no handler finished it) may still get its real outcome. */
export async function setOutcome(
  db: Db,
  replayId: string,
  itemId: bigint | string,
  outcome: ItemOutcome,
  note: string,
): Promise<void> {
  const c = counts(outcome);
  await sqlOf(db)(SET_OUTCOME_SQL, [
    String(itemId),
    outcome,
    note.slice(0, 2000),
    replayId,
    c.sent,
    c.skipped,
    c.failed,
    c.unknown,
  ]);
}

/** A handler's outcomes not yet added to the replay's counters (the progress bar lags by <= 0.5 s;
 *  a crash loses at most that much of the count, and the completion recounts from the items). */
class Tally {
  private d = { sent: 0, skipped: 0, failed: 0, unknown: 0 };
  private flushing: Promise<void> | undefined;
  constructor(
    private readonly q: Query,
    private readonly replayId: string,
  ) {}
  add(outcome: ItemOutcome, was: string | null | undefined) {
    if (was === null || was === undefined) return; // nothing written (decided meanwhile)
    const c = counts(outcome);
    this.d.sent += c.sent;
    this.d.skipped += c.skipped;
    this.d.failed += c.failed;
    this.d.unknown += c.unknown - (was === 'interrupted' ? 1 : 0);
  }
  /** Writes every count added before this call. Flushes run one after another: a call made while one
   *  is writing waits for it and then writes what was added meanwhile (returning the running flush
   *  instead lost those counts on a cancelled replay, which is never recounted). */
  flush(): Promise<void> {
    const write = async (): Promise<void> => {
      const d = this.d;
      if (!d.sent && !d.skipped && !d.failed && !d.unknown) return;
      this.d = { sent: 0, skipped: 0, failed: 0, unknown: 0 };
      try {
        await this.q(
          'UPDATE replay SET sent = sent + $2, skipped = skipped + $3, failed = failed + $4, unknown = unknown + $5 WHERE id = $1::uuid',
          [this.replayId, d.sent, d.skipped, d.failed, d.unknown],
        );
      } catch (error) {
        for (const k of ['sent', 'skipped', 'failed', 'unknown'] as const) this.d[k] += d[k]; // next time
        throw error;
      }
    };
    const next = (this.flushing ?? Promise.resolve()).catch(() => {}).then(write);
    const tracked: Promise<void> = next.finally(() => {
      if (this.flushing === tracked) this.flushing = undefined;
    });
    this.flushing = tracked;
    tracked.catch(() => {}); // the caller handles the error of its own flush
    return next;
  }
}

/** transitionWithOutcome, retried through a database outage (the send already happened). */
function settle(
  q: Query,
  tally: Tally,
  actor: Actor,
  t: Parameters<typeof transitionWithOutcome>[3],
  o: Parameters<typeof transitionWithOutcome>[4],
  log?: (l: string) => void,
) {
  let tries = 0;
  return persistThroughOutage(
    `outcome of ${t.key}`,
    () => transitionWithOutcome(q, tally, actor, { ...t, retried: tries++ > 0 }, o),
    log,
  );
}

const TRANSITION_ACTIONS = { done: 'effect.complete', failed: 'effect.fail', stuck: 'effect.stuck' } as const;

/** pending -> done / failed / stuck for the executor, plus the item's outcome (null: none yet). */
async function transitionWithOutcome(
  q: Query,
  tally: Tally,
  actor: Actor,
  t: {
    key: string;
    epoch: number;
    attemptId: string;
    to: 'done' | 'failed' | 'stuck';
    receipt?: string;
    evidence?: Record<string, unknown>;
    raw?: RawResponse;
    retried?: boolean;
  },
  o: { replayId: string; itemId: string; outcome: ItemOutcome | null; note: string | null },
): Promise<void> {
  if (t.to === 'done' && !t.receipt?.trim())
    throw new LedgerError('validation', 'done needs a provider receipt that can be looked up later (S2)');
  const sources = allowedSources(t.to, partyOf(actor));
  const rows = await q<{ ok: boolean; epoch: number; from_state: string; problem: string | null; was: string | null }>(
    TRANSITION_SQL,
    [
      o.itemId,
      o.outcome,
      o.note?.slice(0, 2000) ?? null,
      t.key,
      t.epoch,
      t.to,
      sources,
      actor.id,
      actor.label,
      TRANSITION_ACTIONS[t.to],
      t.receipt?.trim() ?? null,
      t.evidence ? JSON.stringify(t.evidence) : null,
      t.attemptId,
      t.raw?.status ?? null,
      t.raw ? JSON.stringify(t.raw.headers) : null,
      t.raw ? Buffer.from(t.raw.body) : null,
    ],
    'replay_settle',
  );
  const row = rows[0];
  if (!row) throw new LedgerError('not_found', `no effect ${t.key} at epoch ${t.epoch}`);
  if (!row.ok) {
    if (t.retried && row.from_state === t.to) return; // the first attempt committed; its reply was lost
    throw new LedgerError(
      'invalid_transition',
      `cannot move ${t.key} (epoch ${row.epoch}) from ${row.from_state} to ${t.to}${row.problem && row.problem !== 'transition not allowed' ? `: ${row.problem}` : ''}`,
      { state: row.from_state },
    );
  }
  if (o.outcome) tally.add(o.outcome, row.was);
}

/** Items read per query; each window is one round trip for all its items. */
const WINDOW = 128;

export async function runChunk(
  deps: ExecutorDeps,
  chunk: ReplayChunk,
): Promise<{ processed: number; stoppedBy?: string }> {
  const { db } = deps;
  const q = sqlOf(db);
  const statusOf = async (id: string) =>
    (
      await q<{ status: string; run_id: string }>(
        'SELECT status, run_id::text AS run_id FROM replay WHERE id = $1::uuid',
        [id],
      )
    )[0];
  const replay = await statusOf(chunk.replayId);
  if (!replay || replay.status !== 'running') return { processed: 0, stoppedBy: replay?.status ?? 'missing' };
  const replayId = chunk.replayId;
  const runId = replay.run_id;
  const actor = executorActor(replayId);
  const parallel = Math.max(1, deps.itemConcurrency ?? 8);

  // Lanes pull items from a buffer refilled one window at a time: the set is streamed, never loaded.
  let cursor = BigInt(chunk.fromId) - 1n;
  const last = BigInt(chunk.toId);
  let buffer: ItemRow[] = [];
  let exhausted = false;
  let refill: Promise<void> | undefined;
  let processed = 0;
  let stoppedBy: string | undefined;
  let failure: unknown;
  const tally = new Tally(q, replayId);
  const next = async (): Promise<ItemRow | undefined> => {
    for (;;) {
      if (stoppedBy || failure !== undefined) return undefined;
      const item = buffer.shift();
      if (item) return item;
      if (exhausted) return undefined;
      refill ??= (async () => {
        const t0 = performance.now();
        const rows = await q<ItemRow>(WINDOW_SQL, [replayId, runId, actor.id, String(cursor), String(last), WINDOW]); // unnamed: planned each time on the tables' current sizes
        if (rows.length < WINDOW) exhausted = true;
        if (rows.length) cursor = BigInt(rows[rows.length - 1]!.id);
        buffer = rows;
        span('window', t0);
      })().finally(() => (refill = undefined));
      await refill;
    }
  };
  const lane = async () => {
    for (let item = await next(); item; item = await next()) {
      try {
        const r = await processItem(deps, q, tally, replayId, runId, actor, item);
        if (r === 'stopped') {
          stoppedBy ??= (await statusOf(replayId))?.status ?? 'missing';
          return;
        }
        processed++;
      } catch (error) {
        if (failure === undefined) failure = error;
        return;
      }
    }
  };
  const flusher = setInterval(
    () => void tally.flush().catch((e: unknown) => deps.log?.(`replay counters: ${(e as Error).message}`)),
    500,
  );
  try {
    await Promise.all(Array.from({ length: parallel }, lane));
  } finally {
    clearInterval(flusher);
    await tally
      .flush()
      .catch((e: unknown) => deps.log?.(`replay counters: ${(e as Error).message} (the completion recounts)`));
  }
  if (failure !== undefined) {
    if (failure instanceof Error) Object.assign(failure, { processed });
    throw failure;
  }
  if (stoppedBy) return { processed, stoppedBy };
  await completeIfDone(db, replayId, runId, actor);
  return { processed };
}

async function processItem(
  deps: ExecutorDeps,
  q: Query,
  tally: Tally,
  replayId: string,
  runId: string,
  actor: Actor,
  item: ItemRow,
): Promise<'stopped' | void> {
  const { db } = deps;
  const itemId = item.id;
  const outcome = async (o: ItemOutcome, note: string) => {
    const [row] = await q<{ was: string | null }>(ITEM_OUTCOME_SQL, [itemId, o, note.slice(0, 2000)], 'replay_outcome');
    tally.add(o, row?.was);
  };
  const frozen = item.note?.startsWith('frozen:') ? item.note.slice(7) : null;
  if (!item.ours) {
    if (item.fp !== frozen) {
      return outcome(
        'skipped',
        `changed after confirmation: now ${item.view_state} by ${item.changed_by ?? 'nobody'} (was ${frozen}) (F4)`,
      );
    }
  } else {
    // This replay claimed the key before (a handler that crashed or ran twice).
    switch (item.view_state) {
      case 'failed':
        if (item.changed_by !== actor.label) {
          return outcome(
            'skipped',
            `changed after confirmation: failed by ${item.changed_by} after this replay's attempt (F4)`,
          );
        }
        break; // our own freed claim (provider unreachable): claim again
      case 'in_flight':
        if (item.changed_by === actor.label)
          return outcome(
            'interrupted',
            'claimed by this replay, no outcome recorded: the reconciler decides after the lease (S4)',
          );
        return outcome('skipped', `claimed by ${item.changed_by} after this replay's attempt`);
      case 'done':
        return outcome('sent', `receipt ${item.receipt}`);
      case 'unknown':
        return outcome('unknown', `unknown: ${item.changed_by} decided after this replay's attempt`);
      case 'stuck':
        return outcome('failed', 'stuck (S6)');
      case 'not_sent':
      case 'awaiting_claim':
      case 'revoked':
        return outcome('skipped', `changed after this replay's attempt: ${item.view_state} by ${item.changed_by}`);
      default:
        return item.view_state satisfies never;
    }
  }

  const tool = await getTool(db, item.tool);
  let provider: RegisteredProvider;
  try {
    provider = deps.providers.get(tool.provider);
  } catch (error) {
    // Nothing was claimed: the item stays open for a retry once the provider is configured.
    throw new RetryChunk((error as Error).message);
  }
  await deps.limiter?.acquire(tool.provider);

  // F3: the same claim as the runtime's (claimEffect): key derived from the registered tool and the
  // run's trigger, one ledger_claim call that commits pending before the provider call (S1).
  if (!checkTransition('none', 'pending', partyOf(actor)).allowed)
    throw new LedgerError('forbidden', 'the executor may not claim');
  if (!tool.actions.includes(item.action)) {
    return outcome('skipped', `action "${item.action}" is no longer registered for tool "${tool.name}"`);
  }
  const run = await getRun(db, runId);
  const { key, target } = deriveKey({
    triggerId: run.triggerId,
    tool: tool.name,
    action: item.action,
    recordId: item.record_id,
    targetType: tool.targetType,
    target: item.target,
  });
  if (key !== item.key)
    return outcome('skipped', `the key derived now (${key}) differs from the frozen one: not sent (K2)`);
  let ts = performance.now();
  const claimRows = await q<ClaimRow>(
    CLAIM_SQL,
    [
      key,
      tool.name,
      item.action,
      item.record_id,
      target,
      tool.targetType,
      run.triggerId,
      run.id,
      actor.label,
      tool.leaseSeconds,
      JSON.stringify(requestJson(undefined)),
      replayId,
    ],
    'replay_claim',
  );
  const claim = claimRows[0];
  span('claim', ts);
  if (!claim) return 'stopped'; // paused or cancelled: nothing claimed, the item stays open
  if (!claim.claimed) {
    // Another handler of this same replay holds it (pg-boss ran the chunk twice): its outcome stands;
    // if that handler dies, the next run of the chunk finds the claim ours and reports it interrupted.
    if (claim.state === 'pending' && claim.changed_by === actor.label) return;
    return outcome('skipped', `lost the claim: ${claim.state} by ${claim.changed_by} (F3)`);
  }
  const attemptId = claim.attempt_id!;
  const epoch = claim.epoch;

  const payload = (deps.payload ?? defaultPayload)({
    tool: item.tool,
    action: item.action,
    recordId: item.record_id,
    target,
  });
  let raw: RawResponse;
  ts = performance.now();
  try {
    const timeout =
      (deps.providers.has(tool.provider) ? deps.providers.settings(tool.provider).sendTimeoutSeconds : undefined) ?? 30;
    raw = await provider.send(
      { key, epoch, idempotencyKey: claim.idempotency_key, target, payload },
      AbortSignal.timeout(timeout * 1000),
    );
  } catch (error) {
    if (isCallFailure(error) && error.providerSent === 'no') {
      await settle(
        q,
        tally,
        actor,
        { key, epoch, attemptId, to: 'failed', evidence: { error: error.message, ...error.detail, sent: 'no' } },
        { replayId, itemId, outcome: null, note: null },
        deps.log,
      );
      throw new RetryChunk(`provider ${tool.provider} unreachable: ${error.message}`);
    }
    // Ambiguous: the executor may not decide unknown; the key stays pending for the reconciler (S4).
    deps.log?.(`ambiguous send for ${key}: ${(error as Error).message}`);
    return outcome('unknown', `ambiguous call, left pending for the reconciler: ${(error as Error).message}`);
  }
  span('send', ts);
  ts = performance.now();
  const verdict = provider.classify(raw);
  // R1: done, failed and stuck store the raw response in their own statement (below); the other
  // verdicts store it here, before anything else happens to the key.
  if (verdict.outcome !== 'done' && verdict.outcome !== 'failed' && verdict.outcome !== 'stuck') {
    await persistThroughOutage(
      `response of ${key}`,
      () => q(RESPONSE_SQL, [attemptId, raw.status, JSON.stringify(raw.headers), Buffer.from(raw.body)]),
      deps.log,
    );
  }
  const ref = { key, epoch, attemptId, raw };
  const o = (x: ItemOutcome | null, note: string | null) => ({ replayId, itemId, outcome: x, note });
  try {
    switch (verdict.outcome) {
      case 'done':
        await settle(
          q,
          tally,
          actor,
          { ...ref, to: 'done', receipt: verdict.receipt },
          o('sent', `receipt ${verdict.receipt}`),
          deps.log,
        );
        return span('done', ts);
      case 'failed':
        if (verdict.evidence.unavailable === true) {
          await settle(q, tally, actor, { ...ref, to: 'failed', evidence: verdict.evidence }, o(null, null), deps.log);
          throw new RetryChunk(`provider ${tool.provider} unavailable (${raw.status})`);
        }
        return await settle(
          q,
          tally,
          actor,
          { ...ref, to: 'failed', evidence: verdict.evidence },
          o('failed', `rejected: ${JSON.stringify(verdict.evidence).slice(0, 500)}`),
          deps.log,
        );
      case 'stuck':
        return await settle(
          q,
          tally,
          actor,
          { ...ref, to: 'stuck', evidence: verdict.evidence },
          o('failed', 'stuck (S6)'),
          deps.log,
        );
      case 'already_existed': {
        // R3: follow the pointer and record the prior object's state.
        const prior = provider.followReference
          ? await provider.followReference(verdict.reference).catch(() => null)
          : null;
        if (prior?.found && prior.state !== 'failed') {
          // The receipt comes from the prior object; the pointer is kept as the transition's evidence.
          await completeEffect(
            { db, actor },
            {
              key,
              epoch,
              receipt: prior.receipt,
              attemptId,
              evidence: { ...verdict.evidence, reference: verdict.reference },
            },
          );
          return outcome('sent', `already existed: receipt ${prior.receipt}`);
        }
        if (prior?.found && prior.state === 'failed') {
          return await settle(
            q,
            tally,
            actor,
            { ...ref, to: 'stuck', evidence: { ...verdict.evidence, reference: verdict.reference, prior: 'failed' } },
            o('failed', 'already existed as a failed object: stuck (R3, S6)'),
            deps.log,
          );
        }
        return outcome(
          'unknown',
          `already existed at ${verdict.reference}; the prior object could not be read, left pending for the reconciler`,
        );
      }
      case 'unknown':
        return outcome('unknown', `ambiguous response ${raw.status}, left pending for the reconciler`);
      default:
        return verdict satisfies never;
    }
  } catch (error) {
    // The reconciler may have moved a slow send on (its lease expired): its decision stands.
    if (error instanceof LedgerError && error.code === 'invalid_transition') {
      return outcome('unknown', `${error.message} (decided by the reconciler meanwhile)`);
    }
    throw error;
  }
}

/** Completes a running replay whose items all have an outcome. The counters are recounted from the
 *  items here (handlers add to them in batches; a crash may have lost a batch). */
export async function completeIfDone(db: Db, replayId: string, runId: string, actor: Actor): Promise<boolean> {
  const q = sqlOf(db);
  const [open] = await q<{ open: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM replay_item WHERE replay_id = $1::uuid AND outcome IS NULL) AS open, (SELECT status FROM replay WHERE id = $1::uuid) AS status`,
    [replayId],
  );
  if (!open || open.open) return false;
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>(Prisma.sql`
      UPDATE replay r SET status = 'completed', finished_at = now(), sent = c.sent, skipped = c.skipped, failed = c.failed, unknown = c.unknown
        FROM (SELECT count(*) FILTER (WHERE outcome = 'sent')::int AS sent, count(*) FILTER (WHERE outcome = 'skipped')::int AS skipped,
                     count(*) FILTER (WHERE outcome = 'failed')::int AS failed, count(*) FILTER (WHERE outcome IN ('unknown', 'interrupted'))::int AS unknown,
                     count(*) FILTER (WHERE outcome IS NULL) AS open
                FROM replay_item WHERE replay_id = ${replayId}::uuid) c
       WHERE r.id = ${replayId}::uuid AND r.status = 'running' AND c.open = 0 RETURNING r.id`);
    if (rows.length === 0) return false;
    const r = await tx.replay.findUniqueOrThrow({ where: { id: replayId } });
    await appendAudit(tx, {
      chain: `run:${runId}`,
      actor,
      action: 'replay.complete',
      subjectType: 'replay',
      subjectId: replayId,
      runId,
      before: 'running',
      after: 'completed',
      detail: {
        sent: r.sent,
        skipped: r.skipped,
        failed: r.failed,
        unknown: r.unknown,
        total: r.total,
        exactlyOnceAfter: await exactlyOnce(tx, runId),
      },
    });
    return true;
  });
}
