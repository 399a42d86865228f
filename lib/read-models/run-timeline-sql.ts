// The statements behind a run's timeline. Each kind comes from the table that records it; each
// source is read newest (or oldest) first off an index that starts with the run, up to one page past
// the cursor, and the page is the first rows of their merge. So a page costs about the same on the
// first page and 90% of the way into a 1,000,000-item run (`BENCH_ONLY=console npm run bench`,
// scripts/bench/timeline.ts):
//   claim, transition, decision  audit_entry (run_id, at): the ledger writes one entry per claim and
//                                per state change in the same statement as the change, with who by name
//   attempt, answer              attempt (run_id, started_at) and (run_id, responded_at)
//   replay                       replay (run_id): a run has a handful
// With a target, each source is read by that target's keys instead (the effect's audit chain, the
// attempts' (key, epoch) index), which are few whatever the run's size.
import { Prisma } from '../db/client.ts';
import type { TimelineKind, TimelineQuery } from './run-timeline-query.ts';

/** Effect state changes the ledger makes on its own or for a runtime (S2-S6). */
export const TRANSITION_ACTIONS = [
  'effect.complete',
  'effect.fail',
  'effect.mark_unknown',
  'effect.mark_stuck',
  'effect.revoke_deletion',
  'effect.report',
] as const;

/** What people decide about a run: its plan, its replays, bumps and their approvals, and the effects
 *  they resolve or revoke (S4, S5, E1, P2, F1-F5, Z3). A replay's own run is the replay kind. */
export const DECISION_ACTIONS = [
  'plan.submit',
  'plan.approve',
  'plan.reject',
  'effect.resolve_sent',
  'effect.resolve_not_sent',
  'effect.revoke',
  'effect.bump',
  'approval.request',
  'approval.approve',
  'approval.reject',
  'replay.request',
  'replay.approve',
  'replay.reject',
  'replay.start',
  'replay.pause',
  'replay.resume',
  'replay.cancel',
] as const;

/** The action names as SQL literals (they are this file's constants, never input): the planner sees
 *  the list itself rather than a parameter. */
const literals = (names: readonly string[]) => Prisma.raw(names.map((n) => `'${n.replace(/'/g, "''")}'`).join(', '));

/** One column list for every source, so that they merge with UNION ALL. */
export interface TimelineSqlRow {
  at: Date;
  at_text: string;
  tie: string;
  kind: TimelineKind;
  what: string;
  who: string | null;
  who_kind: string | null;
  key: string | null;
  epoch: number | null;
  from_state: string | null;
  to_state: string | null;
  note: string | null;
  ms: number | null;
  target: string | null;
}

interface Source {
  at: Prisma.Sql;
  tie: Prisma.Sql;
}

/** The keyset condition of one source, written so that its index bounds the time column. */
function after(q: TimelineQuery, s: Source): Prisma.Sql {
  if (!q.after) return Prisma.empty;
  const at = Prisma.sql`${q.after.at}::timestamptz`;
  const tie = Prisma.sql`${q.after.tie}::text COLLATE "C"`;
  return q.order === 'newest'
    ? Prisma.sql`AND ${s.at} <= ${at} AND (${s.at} < ${at} OR ${s.tie} < ${tie})`
    : Prisma.sql`AND ${s.at} >= ${at} AND (${s.at} > ${at} OR ${s.tie} > ${tie})`;
}

function orderOf(q: TimelineQuery, s: Source): Prisma.Sql {
  return q.order === 'newest'
    ? Prisma.sql`ORDER BY ${s.at} DESC, ${s.tie} DESC`
    : Prisma.sql`ORDER BY ${s.at}, ${s.tie}`;
}

function auditSource(runId: string, q: TimelineQuery, keys: string[] | null, n: number): Prisma.Sql | null {
  const actions = [
    ...(q.kinds.includes('claim') ? ['effect.claim'] : []),
    ...(q.kinds.includes('transition') ? TRANSITION_ACTIONS : []),
    ...(q.kinds.includes('decision') ? DECISION_ACTIONS : []),
  ];
  if (actions.length === 0) return null;
  const s = { at: Prisma.sql`a.at`, tie: Prisma.sql`('a' || lpad(a.id::text, 19, '0')) COLLATE "C"` };
  // An effect's entries are its own chain: the (chain, seq) index finds a target's few.
  const byKey = keys ? Prisma.sql`AND a.chain = ANY(${keys.map((k) => `effect:${k}`)}::text[])` : Prisma.empty;
  return Prisma.sql`(SELECT a.at, a.at::text AS at_text, ${s.tie} AS tie,
      CASE WHEN a.action = 'effect.claim' THEN 'claim'
           WHEN a.action IN (${literals(TRANSITION_ACTIONS)}) THEN 'transition' ELSE 'decision' END AS kind,
      a.action AS what, a.actor_label AS who, a.actor_kind::text AS who_kind,
      CASE WHEN a.subject_type = 'effect' THEN a.subject_id END AS key,
      CASE WHEN a.detail->>'epoch' ~ '^[0-9]{1,9}$' THEN (a.detail->>'epoch')::int END AS epoch,
      a.before_state AS from_state, a.after_state AS to_state, a.reason AS note,
      NULL::float8 AS ms, NULL::uuid AS attempt_id, a.seq
    FROM audit_entry a
    WHERE a.run_id = ${runId}::uuid AND a.outcome = 'ok' AND a.action IN (${literals(actions)}) ${byKey} ${after(q, s)}
    ${orderOf(q, s)} LIMIT ${n})`;
}

/** A provider call (kind attempt, at its start, lasting until its answer) or its answer (kind answer). */
function attemptSource(
  runId: string,
  q: TimelineQuery,
  keys: string[] | null,
  n: number,
  kind: 'attempt' | 'answer',
): Prisma.Sql | null {
  if (!q.kinds.includes(kind)) return null;
  const s =
    kind === 'attempt'
      ? { at: Prisma.sql`t.started_at`, tie: Prisma.sql`('t' || t.id::text) COLLATE "C"` }
      : { at: Prisma.sql`t.responded_at`, tie: Prisma.sql`('p' || t.id::text) COLLATE "C"` };
  const byKey = keys ? Prisma.sql`AND t.key = ANY(${keys}::text[])` : Prisma.empty;
  const answered = kind === 'answer' ? Prisma.sql`AND t.responded_at IS NOT NULL` : Prisma.empty;
  return Prisma.sql`(SELECT ${s.at} AS at, ${s.at}::text AS at_text, ${s.tie} AS tie, ${kind}::text AS kind,
      ${kind === 'attempt' ? Prisma.sql`'provider call'` : Prisma.sql`coalesce('HTTP ' || t.response_status, 'answer without a status')`} AS what,
      NULL::text AS who, NULL::text AS who_kind, t.key, t.epoch, NULL::text AS from_state, NULL::text AS to_state,
      ${kind === 'attempt' ? Prisma.sql`CASE WHEN t.responded_at IS NULL THEN 'no answer recorded' END` : Prisma.sql`NULL::text`} AS note,
      extract(epoch FROM t.responded_at - t.started_at) * 1000 AS ms, t.id AS attempt_id, NULL::int AS seq
    FROM attempt t
    WHERE t.run_id = ${runId}::uuid ${answered} ${byKey} ${after(q, s)}
    ${orderOf(q, s)} LIMIT ${n})`;
}

function replaySource(runId: string, q: TimelineQuery, keys: string[] | null, n: number): Prisma.Sql | null {
  if (!q.kinds.includes('replay')) return null;
  const s = { at: Prisma.sql`r.created_at`, tie: Prisma.sql`('r' || r.id::text) COLLATE "C"` };
  const byKey = keys
    ? Prisma.sql`AND EXISTS (SELECT 1 FROM replay_item ri WHERE ri.replay_id = r.id AND ri.key = ANY(${keys}::text[]))`
    : Prisma.empty;
  return Prisma.sql`(SELECT r.created_at AS at, r.created_at::text AS at_text, ${s.tie} AS tie, 'replay'::text AS kind,
      'replay ' || r.status AS what, u.email AS who, 'user'::text AS who_kind, NULL::text AS key, NULL::int AS epoch,
      NULL::text AS from_state, NULL::text AS to_state,
      format('%s of %s sent, %s skipped, %s failed, %s unknown: %s', r.sent, r.total, r.skipped, r.failed, r.unknown, r.reason) AS note,
      extract(epoch FROM r.finished_at - r.started_at) * 1000 AS ms, NULL::uuid AS attempt_id, NULL::int AS seq
    FROM replay r LEFT JOIN app_user u ON u.id = r.requested_by_id
    WHERE r.run_id = ${runId}::uuid ${byKey} ${after(q, s)}
    ${orderOf(q, s)} LIMIT ${n})`;
}

/**
 * One page (and one row more, which says there is a next page) of the run's events, with what each
 * row needs but its source does not hold, looked up for the page's rows only: the effect's target,
 * the attempt's caller by name (as its claim's audit entry names them), the provider that answered, and
 * a state change's time in the state it left.
 */
export function timelineSql(runId: string, q: TimelineQuery, keys: string[] | null): Prisma.Sql | null {
  const n = q.limit + 1;
  const sources = [
    auditSource(runId, q, keys, n),
    attemptSource(runId, q, keys, n, 'attempt'),
    attemptSource(runId, q, keys, n, 'answer'),
    replaySource(runId, q, keys, n),
  ].filter((s): s is Prisma.Sql => s !== null);
  if (sources.length === 0) return null;
  const order = q.order === 'newest' ? Prisma.sql`ORDER BY e.at DESC, e.tie DESC` : Prisma.sql`ORDER BY e.at, e.tie`;
  return Prisma.sql`WITH page AS MATERIALIZED (
      SELECT * FROM (${Prisma.join(sources, ' UNION ALL ')}) e ${order} LIMIT ${n}
    )
    SELECT e.at, e.at_text, e.tie, e.kind, e.what, e.key, e.epoch, e.from_state, e.to_state, e.note, k.target,
      CASE WHEN e.kind = 'answer' THEN coalesce(tool.provider, k.tool)
           WHEN e.kind = 'attempt' THEN caller.label ELSE e.who END AS who,
      CASE WHEN e.kind = 'answer' THEN 'provider' WHEN e.kind = 'attempt' THEN caller.kind ELSE e.who_kind END AS who_kind,
      CASE WHEN e.from_state IS NOT NULL AND prev.at IS NOT NULL THEN extract(epoch FROM e.at - prev.at) * 1000
           ELSE e.ms END AS ms
    FROM page e
    LEFT JOIN effect_key k ON k.key = e.key
    LEFT JOIN tool_definition tool ON e.kind = 'answer' AND tool.name = k.tool
    -- The caller of a provider call is who claimed it, as the trail names them (the claim's entry
    -- carries the attempt's id; the effect's chain holds a few entries).
    LEFT JOIN LATERAL (
      SELECT c.actor_label AS label, c.actor_kind::text AS kind FROM audit_entry c
       WHERE c.chain = 'effect:' || e.key AND c.action = 'effect.claim' AND c.detail->>'attemptId' = e.attempt_id::text
       LIMIT 1) caller ON e.kind = 'attempt'
    -- Time in the state a change left: since the change before it on the effect's chain, both
    -- stamped by the same clock (the audit trigger's).
    LEFT JOIN LATERAL (
      SELECT p.at FROM audit_entry p
       WHERE p.chain = 'effect:' || e.key AND p.seq < e.seq AND p.outcome = 'ok' AND p.after_state IS NOT NULL
       ORDER BY p.seq DESC LIMIT 1) prev ON e.from_state IS NOT NULL AND e.seq IS NOT NULL
    ${order}`;
}
