// Runs list: one page of runs (keyset on created_at, id), each with its per-state counts and the
// exactly-once figure P4 of its approved plan.
import type { Db } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import {
  decodeCursor,
  emptyCounts,
  encodeCursor,
  remember,
  likeLiteral,
  runIdRange,
  rememberWhileUnchanged,
  seedRemembered,
  TIMESTAMP_TEXT,
  UUID_TEXT,
  type StateCounts,
} from './common.ts';
import { EFFECT_STATES, type EffectState } from '@/lib/ledger/transitions.ts';
import { exactlyOnceOfPlan } from './exactly-once.ts';
import { workflowInScopeSql, type WorkflowScope } from '@/lib/auth/grants.ts';
import { changeMark } from './change-mark.ts';

export interface RunsFilter {
  workflow?: string;
  status?: string;
  from?: string;
  to?: string;
  q?: string;
  cursor?: string;
  limit?: number;
}

export interface RunRow {
  id: string;
  workflow: string;
  status: string;
  triggerId: string;
  createdAt: Date;
  planId: string | null;
  planStatus: string | null;
  planItems: number;
  counts: StateCounts;
  exactlyOnce: { numerator: number; denominator: number; asOf: Date | null } | null;
}

const RUN_STATUSES = ['running', 'completed', 'crashed', 'replaying'];
const LARGE_PLAN = 50_000;

export async function listRuns(
  db: Db,
  filter: RunsFilter,
  scope: WorkflowScope,
): Promise<{ rows: RunRow[]; next: string | null; workflows: string[] }> {
  const limit = Math.min(Math.max(filter.limit ?? 25, 1), 100);
  const cursor = decodeCursor(
    filter.cursor,
    (v): v is [string, string] =>
      v.length === 2 &&
      typeof v[0] === 'string' &&
      TIMESTAMP_TEXT.test(v[0]) &&
      typeof v[1] === 'string' &&
      UUID_TEXT.test(v[1]),
  );
  // Z1: only runs of workflows the viewer holds a role in.
  const where: Prisma.Sql[] = [workflowInScopeSql(scope, Prisma.sql`r.workflow`)];
  if (filter.workflow) where.push(Prisma.sql`r.workflow = ${filter.workflow}`);
  if (filter.status && RUN_STATUSES.includes(filter.status))
    where.push(Prisma.sql`r.status = ${filter.status}::"RunStatus"`);
  const from = filter.from ? new Date(filter.from) : null;
  const to = filter.to ? new Date(filter.to) : null;
  if (from && !Number.isNaN(from.getTime())) where.push(Prisma.sql`r.created_at >= ${from}`);
  if (to && !Number.isNaN(to.getTime())) where.push(Prisma.sql`r.created_at < ${to}`);
  // Any part of the event id, or the run's id as shown (its short id or the whole UUID).
  if (filter.q) {
    const run = runIdRange(filter.q);
    const event = Prisma.sql`e.trigger_id ILIKE ${`%${likeLiteral(filter.q)}%`}`;
    where.push(run ? Prisma.sql`(${event} OR r.id BETWEEN ${run.lo}::uuid AND ${run.hi}::uuid)` : event);
  }
  if (cursor) where.push(Prisma.sql`(r.created_at, r.id) < (${cursor[0]}::timestamptz, ${cursor[1]}::uuid)`);
  const rows = await db.$queryRaw<
    {
      id: string;
      workflow: string;
      status: string;
      trigger_id: string;
      created_at: Date;
      position: string;
      plan_id: string | null;
      plan_status: string | null;
      item_count: number | null;
    }[]
  >`
    SELECT r.id, r.workflow, r.status::text, e.trigger_id, r.created_at, r.created_at::text AS position, p.id AS plan_id, p.status::text AS plan_status, p.item_count
    FROM run r JOIN event e ON e.id = r.event_id
    LEFT JOIN LATERAL (SELECT id, status, item_count FROM plan WHERE plan.run_id = r.id AND status <> 'rejected' ORDER BY submitted_at DESC LIMIT 1) p ON TRUE
    WHERE ${Prisma.join(where, ' AND ')}
    ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  const counts = await stateCountsFor(
    db,
    page.map((r) => r.id),
  );
  const out: RunRow[] = [];
  for (const r of page) {
    out.push({
      id: r.id,
      workflow: r.workflow,
      status: r.status,
      triggerId: r.trigger_id,
      createdAt: r.created_at,
      planId: r.plan_id,
      planStatus: r.plan_status,
      planItems: r.item_count ?? 0,
      counts: counts.get(r.id) ?? emptyCounts(),
      exactlyOnce:
        r.plan_id && r.plan_status === 'approved' ? await exactlyOnce(db, r.plan_id, r.item_count ?? 0) : null,
    });
  }
  const last = page[page.length - 1];
  const workflows = (
    await db.$queryRaw<{ workflow: string }[]>`
      SELECT DISTINCT workflow FROM run WHERE ${workflowInScopeSql(scope, Prisma.sql`workflow`)} ORDER BY workflow LIMIT 200`
  ).map((w) => w.workflow);
  return {
    rows: out,
    next: rows.length > limit && last ? encodeCursor([last.position, last.id]) : null,
    workflows,
  };
}

const LARGE_RUN_COUNTS_MS = 5_000;
const largeRuns = new Set<string>();

/** A large run's counts, shared by concurrent views, checked at most every few seconds and counted
 *  again only when something changed. */
const rememberCounts = (db: Db, runId: string) =>
  remember(`counts:${runId}`, LARGE_RUN_COUNTS_MS, () => countRun(db, runId), { mark: () => changeMark(db) });

/** The six per-state counts of one run, computed now (six index-only range scans in parallel). */
export async function countRun(db: Db, runId: string): Promise<StateCounts> {
  const counts = emptyCounts();
  await Promise.all(
    EFFECT_STATES.map(async (state) => {
      const [row] = await db.$queryRaw<
        { n: bigint }[]
      >`SELECT count(*) AS n FROM effect_key WHERE run_id = ${runId}::uuid AND state = ${state}::"EffectState"`;
      counts[state] = Number(row?.n ?? 0);
    }),
  );
  return counts;
}

/**
 * Per-state counts of the keys claimed in each run (index effect_key(run_id, state)): one GROUP BY
 * over the smaller runs (one round trip per page, however many runs it lists). A run with more than
 * LARGE_PLAN keys is counted by countRun's six index-only range scans in parallel (on a million keys
 * about twice as fast as the GROUP BY, whose per-row aggregation dominates), shared by concurrent
 * views and counted again only when something changed.
 */
export async function stateCountsFor(db: Db, runIds: string[]): Promise<Map<string, StateCounts>> {
  const map = new Map<string, StateCounts>();
  if (runIds.length === 0) return map;
  // A large run on a page of runs is counted as the run page counts it (shared, a few seconds old at
  // most), not in the GROUP BY: otherwise every view of the runs list scans its million keys.
  const large = runIds.filter((id) => largeRuns.has(id));
  const small = runIds.filter((id) => !largeRuns.has(id));
  const [rows] = await Promise.all([
    small.length
      ? db.$queryRaw<{ run_id: string; state: EffectState; n: bigint }[]>`
    SELECT run_id, state::text AS state, count(*) AS n FROM effect_key WHERE run_id = ANY(${small}::uuid[]) GROUP BY run_id, state`
      : Promise.resolve([]),
    ...large.map(async (runId) => map.set(runId, (await rememberCounts(db, runId)).value)),
  ]);
  for (const r of rows) {
    const c = map.get(r.run_id) ?? emptyCounts();
    c[r.state] = Number(r.n);
    map.set(r.run_id, c);
  }
  for (const [runId, counts] of map)
    if (!largeRuns.has(runId) && EFFECT_STATES.reduce((sum, s) => sum + counts[s], 0) > LARGE_PLAN) {
      largeRuns.add(runId);
      // Counted just now: the next view's rememberCounts starts from these counts, not a second pass.
      seedRemembered(`counts:${runId}`, counts);
    }
  return map;
}

/**
 * P4 of a plan, exact on every request for plans up to 50,000 items (concurrent views share one
 * computation, and a view after which nothing changed reuses it); for larger ones it is recomputed at
 * most once a minute, only if something changed, and the page says "as of".
 */
export async function exactlyOnce(
  db: Db,
  planId: string,
  items: number,
): Promise<{ numerator: number; denominator: number; asOf: Date | null }> {
  const compute = async () => (await exactlyOnceOfPlan(db, planId, items)).numerator;
  if (items <= LARGE_PLAN)
    return {
      numerator: await rememberWhileUnchanged(`p4-exact:${planId}`, compute, () => changeMark(db)),
      denominator: items,
      asOf: null,
    };
  const { value, at } = await remember(`p4:${planId}`, 60_000, compute, { mark: () => changeMark(db) });
  return { numerator: value, denominator: items, asOf: at };
}
