// Decision insights: how the people deciding keep up. Per workflow, per kind of decision (a four-eyes
// epoch bump, a four-eyes replay, a plan approval) and per day or ISO week of the request: how many
// were asked, approved, rejected, expired, cancelled or are still open, the approval rate (approved
// over decided) and the median and 90th percentile of the time from request to decision. One query
// with grouping sets gives the periods and each workflow's total for the range, so a total's median
// is the median of its requests, not of the periods' medians.
import { invalid, LedgerError } from '@/lib/core/errors.ts';
import { Prisma, type Db } from '@/lib/db/client.ts';
import type { WorkflowScope } from '@/lib/auth/grants.ts';
import { one, type SP } from '@/lib/read-models/views/query.ts';

export const INSIGHT_PERIODS = ['day', 'week'] as const;
export type InsightPeriod = (typeof INSIGHT_PERIODS)[number];
export const DECISION_KINDS = ['bump', 'replay', 'plan'] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

/** The range a page shows unless asked otherwise, and the longest one it answers. */
export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 366;

export interface InsightsQuery {
  period: InsightPeriod;
  /** First and last day of the range (UTC dates, both included). */
  from: string;
  to: string;
}

export interface InsightFigures {
  requested: number;
  approved: number;
  rejected: number;
  expired: number;
  cancelled: number;
  open: number;
  /** approved / (approved + rejected); null when nothing was decided. */
  approvalRate: number | null;
  /** Seconds from request to decision over approved and rejected ones; null when none. */
  medianSeconds: number | null;
  p90Seconds: number | null;
}

export interface InsightRow extends InsightFigures {
  workflow: string;
  kind: DecisionKind;
  /** "2026-12-01" for a day, "2026-W49" for an ISO week; null on a workflow's total for the range. */
  period: string | null;
}

export interface DecisionInsights {
  query: InsightsQuery;
  /** Each workflow's total per kind over the range (period null), then its periods, in order. */
  rows: InsightRow[];
}

const DAY_MS = 86_400_000;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

function parseDay(sp: SP, field: 'from' | 'to'): Date | undefined {
  const text = one(sp, field);
  if (text === undefined) return undefined;
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : null;
  if (!day || Number.isNaN(day.getTime()) || isoDay(day) !== text)
    throw invalid(field, `"${field}" must be a date written YYYY-MM-DD, not "${text}"`);
  return day;
}

/** The query from a page's or a route's search parameters; a bad one is refused naming its field. */
export function insightsQueryFrom(sp: SP, now: Date = new Date()): InsightsQuery {
  const periodText = one(sp, 'period') ?? 'day';
  if (!(INSIGHT_PERIODS as readonly string[]).includes(periodText))
    throw invalid('period', `"period" must be one of ${INSIGHT_PERIODS.join(', ')}, not "${periodText}"`);
  const to = parseDay(sp, 'to') ?? new Date(`${isoDay(now)}T00:00:00Z`);
  const from = parseDay(sp, 'from') ?? new Date(to.getTime() - (DEFAULT_RANGE_DAYS - 1) * DAY_MS);
  if (from > to) throw invalid('to', `"to" (${isoDay(to)}) must not be before "from" (${isoDay(from)})`);
  const days = (to.getTime() - from.getTime()) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS)
    throw invalid('from', `the range may span at most ${MAX_RANGE_DAYS} days; this one spans ${days}`);
  return { period: periodText as InsightPeriod, from: isoDay(from), to: isoDay(to) };
}

/** The same, for a page: the query, or the refusal naming the field at fault (the page says why). */
export function insightsQueryOrProblem(sp: SP): {
  query: InsightsQuery | null;
  problem: { field: string; message: string } | null;
} {
  try {
    return { query: insightsQueryFrom(sp), problem: null };
  } catch (error) {
    if (error instanceof LedgerError && error.code === 'validation')
      return { query: null, problem: { field: String(error.details.field), message: error.message } };
    throw error;
  }
}

interface Raw {
  workflow: string;
  kind: DecisionKind;
  period: string | null;
  requested: number;
  approved: number;
  rejected: number;
  expired: number;
  cancelled: number;
  open: number;
  median_seconds: number | null;
  p90_seconds: number | null;
}

/** A request counts under each workflow it touches (a bump over keys of several runs may span
 *  several), and is seen only when all of them are in the viewer's scope, as on the approvals page. */
function visibleSql(scope: WorkflowScope): Prisma.Sql {
  if (scope.all) return Prisma.sql`cardinality(workflows) > 0`;
  return Prisma.sql`cardinality(workflows) > 0 AND workflows <@ ${[...scope.workflows]}::text[]`;
}

/** Seconds to the millisecond the timestamps hold, without the float noise of the interpolation. */
const toMillis = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 1000) / 1000);

export async function decisionInsights(db: Db, scope: WorkflowScope, query: InsightsQuery): Promise<DecisionInsights> {
  const from = new Date(`${query.from}T00:00:00Z`);
  const until = new Date(new Date(`${query.to}T00:00:00Z`).getTime() + DAY_MS);
  const label = query.period === 'week' ? 'IYYY-"W"IW' : 'YYYY-MM-DD';
  // A bump request made today stores its workflows; an older one is traced through its keys' runs.
  const rows = await db.$queryRaw<Raw[]>`
    WITH asked AS (
      SELECT CASE a.kind WHEN 'effect.bump' THEN 'bump' ELSE a.kind END AS kind, a.requested_at,
             CASE WHEN a.status = 'open' AND a.expires_at <= now() THEN 'expired' ELSE a.status END AS status,
             CASE WHEN a.status IN ('approved', 'rejected')
                  THEN extract(epoch FROM a.decided_at - a.requested_at)::float8 END AS seconds,
             ARRAY(
               SELECT DISTINCT w FROM (
                 SELECT jsonb_array_elements_text(a.payload -> 'workflows') AS w
                  WHERE jsonb_typeof(a.payload -> 'workflows') = 'array'
                 UNION SELECT r.workflow FROM run r WHERE r.id = a.run_id
                 UNION SELECT r.workflow
                         FROM jsonb_array_elements(a.payload -> 'items') AS i
                         JOIN effect_key k ON k.key = i ->> 'key'
                         JOIN run r ON r.id = k.run_id
                        WHERE jsonb_typeof(a.payload -> 'workflows') IS DISTINCT FROM 'array'
                          AND jsonb_typeof(a.payload -> 'items') = 'array'
               ) found WHERE w IS NOT NULL
             ) AS workflows
        FROM approval_request a
       WHERE a.requested_at >= ${from} AND a.requested_at < ${until} AND a.kind IN ('effect.bump', 'replay')
      UNION ALL
      SELECT 'plan', p.submitted_at,
             CASE p.status::text WHEN 'submitted' THEN 'open' ELSE p.status::text END,
             extract(epoch FROM coalesce(p.approved_at, p.rejected_at) - p.submitted_at)::float8,
             ARRAY[r.workflow]
        FROM plan p JOIN run r ON r.id = p.run_id
       WHERE p.submitted_at >= ${from} AND p.submitted_at < ${until}
    ), counted AS (
      SELECT w.workflow, asked.kind, asked.status, asked.seconds,
             to_char(date_trunc(${query.period}, asked.requested_at AT TIME ZONE 'UTC'), ${label}) AS period
        FROM asked CROSS JOIN LATERAL unnest(asked.workflows) AS w(workflow)
       WHERE ${visibleSql(scope)}
    )
    SELECT workflow, kind, period,
           count(*)::int AS requested,
           count(*) FILTER (WHERE status = 'approved')::int AS approved,
           count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
           count(*) FILTER (WHERE status = 'expired')::int AS expired,
           count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
           count(*) FILTER (WHERE status = 'open')::int AS open,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS median_seconds,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90_seconds
      FROM counted
     GROUP BY GROUPING SETS ((workflow, kind, period), (workflow, kind))
     ORDER BY workflow, kind, period NULLS FIRST`;
  return {
    query,
    rows: rows.map((r) => {
      const decided = r.approved + r.rejected;
      return {
        workflow: r.workflow,
        kind: r.kind,
        period: r.period,
        requested: r.requested,
        approved: r.approved,
        rejected: r.rejected,
        expired: r.expired,
        cancelled: r.cancelled,
        open: r.open,
        approvalRate: decided === 0 ? null : r.approved / decided,
        medianSeconds: toMillis(r.median_seconds),
        p90Seconds: toMillis(r.p90_seconds),
      };
    }),
  };
}
