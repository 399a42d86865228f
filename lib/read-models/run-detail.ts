// A run: the plan joined with the ledger (P3). Keyset pagination over plan_item's
// (run_id, target, id) index in either direction, so the first page and the 20,000th cost the
// same; filter by state, prefix search on the normalized target.
import type { Db } from '../db/client.ts';
import { inScope, type WorkflowScope } from '@/lib/auth/grants.ts';
import { Prisma } from '../db/client.ts';
import { exactlyOnce, stateCountsFor } from './runs.ts';
import { decodeCursor, emptyCounts, encodeCursor, type StateCounts } from './common.ts';
import { EFFECT_STATES } from '@/lib/ledger/transitions.ts';
import { isUuid } from '../uuid.ts';

export const VIEWS = ['plan', 'never_sent', 'not_in_plan'] as const;
export type RunView = (typeof VIEWS)[number];

export interface RunTableQuery {
  view?: string;
  state?: string;
  q?: string;
  sort?: string; // 'target' | '-target'
  cursor?: string;
  limit?: number;
}

export interface RunTableRow {
  id: string;
  target: string;
  recordId: string;
  action: string;
  tool: string;
  key: string;
  epoch: number | null;
  state: string | null;
  changedBy: string | null;
  changedAt: Date | null;
  inPlan: boolean;
}

export interface RunHeader {
  id: string;
  workflow: string;
  status: string;
  triggerId: string;
  createdAt: Date;
  toolHistoryComplete: boolean;
  plan: {
    id: string;
    status: string;
    itemCount: number;
    itemsHash: string;
    authorLabel: string;
    submittedAt: Date;
    approvedById: string | null;
    approvedByLabel: string | null;
    approvedAt: Date | null;
  } | null;
  counts: StateCounts;
  exactlyOnce: { numerator: number; denominator: number; asOf: Date | null } | null;
}

/** null for a run that does not exist or belongs to a workflow outside the viewer's scope (Z1): the
 *  page answers both with 404, so a run the viewer may not see cannot be told from a missing one. */
export async function runHeader(db: Db, runId: string, scope: WorkflowScope): Promise<RunHeader | null> {
  if (!isUuid(runId)) return null;
  // The run, its event, its latest plan that was not rejected and that plan's approver in one round
  // trip: the run page is among the most viewed, and each statement costs the server a write and a wait.
  const [row] = await db.$queryRaw<HeaderRow[]>`
    SELECT r.id, r.workflow, r.status::text AS status, r.created_at, r.tool_history_complete, e.trigger_id,
           p.id AS plan_id, p.status::text AS plan_status, p.item_count, p.items_hash, p.author_label,
           p.submitted_at, p.approved_by_id, p.approved_at, u.email AS approver_email
      FROM run r
      JOIN event e ON e.id = r.event_id
      LEFT JOIN LATERAL (SELECT * FROM plan WHERE plan.run_id = r.id AND plan.status <> 'rejected'
                          ORDER BY plan.submitted_at DESC LIMIT 1) p ON TRUE
      LEFT JOIN app_user u ON u.id = p.approved_by_id
     WHERE r.id = ${runId}::uuid`;
  if (!row || !inScope(scope, row.workflow)) return null;
  const counts = (await stateCountsFor(db, [runId])).get(runId) ?? emptyCounts();
  return {
    id: row.id,
    workflow: row.workflow,
    status: row.status,
    triggerId: row.trigger_id,
    createdAt: row.created_at,
    toolHistoryComplete: row.tool_history_complete,
    plan: row.plan_id
      ? {
          id: row.plan_id,
          status: row.plan_status!,
          itemCount: row.item_count!,
          itemsHash: row.items_hash!,
          authorLabel: row.author_label!,
          submittedAt: row.submitted_at!,
          approvedById: row.approved_by_id,
          approvedByLabel: row.approver_email,
          approvedAt: row.approved_at,
        }
      : null,
    counts,
    exactlyOnce:
      row.plan_id && row.plan_status === 'approved' ? await exactlyOnce(db, row.plan_id, row.item_count!) : null,
  };
}

type HeaderRow = {
  id: string;
  workflow: string;
  status: string;
  created_at: Date;
  tool_history_complete: boolean;
  trigger_id: string;
  plan_id: string | null;
  plan_status: string | null;
  item_count: number | null;
  items_hash: string | null;
  author_label: string | null;
  submitted_at: Date | null;
  approved_by_id: string | null;
  approved_at: Date | null;
  approver_email: string | null;
};

type Raw = {
  id: bigint | string;
  target: string;
  record_id: string;
  action: string;
  tool: string;
  key: string;
  epoch: number | null;
  state: string | null;
  changed_by: string | null;
  changed_at: Date | null;
  in_plan: boolean;
};

const isCursor = (v: unknown[]): v is [string, string] =>
  v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string';

export async function runTable(
  db: Db,
  runId: string,
  planId: string | null,
  query: RunTableQuery,
): Promise<{ rows: RunTableRow[]; next: string | null; view: RunView }> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 200);
  const view: RunView = (VIEWS as readonly string[]).includes(query.view ?? '') ? (query.view as RunView) : 'plan';
  const desc = query.sort === '-target';
  const cursor = decodeCursor(query.cursor, isCursor);
  const state = (EFFECT_STATES as readonly string[]).includes(query.state ?? '') ? query.state! : null;
  const q = query.q?.trim() ?? '';
  let raw: Raw[];
  if (view === 'not_in_plan') {
    // Keys claimed in this run whose key is not in its plan (sent but not in the plan, P3).
    const where: Prisma.Sql[] = [Prisma.sql`k.run_id = ${runId}::uuid`];
    if (planId)
      where.push(
        Prisma.sql`NOT EXISTS (SELECT 1 FROM plan_item pi WHERE pi.plan_id = ${planId}::uuid AND pi.key = k.key)`,
      );
    if (state) where.push(Prisma.sql`k.state = ${state}::"EffectState"`);
    if (q) where.push(Prisma.sql`k.target >= ${q} AND k.target < ${q + '\u{10FFFF}'}`);
    if (cursor)
      where.push(
        desc
          ? Prisma.sql`(k.target, k.key) < (${cursor[0]}, ${cursor[1]})`
          : Prisma.sql`(k.target, k.key) > (${cursor[0]}, ${cursor[1]})`,
      );
    raw = await db.$queryRaw<Raw[]>`
      SELECT k.key AS id, k.target, k.record_id, k.action, k.tool, k.key, k.current_epoch AS epoch, k.state::text AS state, k.changed_by, k.changed_at, false AS in_plan
      FROM effect_key k WHERE ${Prisma.join(where, ' AND ')}
      ORDER BY ${desc ? Prisma.sql`k.target DESC, k.key DESC` : Prisma.sql`k.target, k.key`} LIMIT ${limit + 1}`;
  } else {
    if (!planId) return { rows: [], next: null, view };
    const where: Prisma.Sql[] = [Prisma.sql`pi.run_id = ${runId}::uuid`, Prisma.sql`pi.plan_id = ${planId}::uuid`];
    if (view === 'never_sent') where.push(Prisma.sql`k.key IS NULL`);
    else if (state) where.push(Prisma.sql`k.state = ${state}::"EffectState"`);
    if (q) where.push(Prisma.sql`pi.target >= ${q} AND pi.target < ${q + '\u{10FFFF}'}`);
    if (cursor) {
      where.push(
        desc
          ? Prisma.sql`(pi.target, pi.id) < (${cursor[0]}, ${BigInt(cursor[1])})`
          : Prisma.sql`(pi.target, pi.id) > (${cursor[0]}, ${BigInt(cursor[1])})`,
      );
    }
    raw = await db.$queryRaw<Raw[]>`
      SELECT pi.id, pi.target, pi.record_id, pi.action, pi.tool, pi.key, k.current_epoch AS epoch, k.state::text AS state, k.changed_by, k.changed_at, true AS in_plan
      FROM plan_item pi LEFT JOIN effect_key k ON k.key = pi.key
      WHERE ${Prisma.join(where, ' AND ')}
      ORDER BY ${desc ? Prisma.sql`pi.target DESC, pi.id DESC` : Prisma.sql`pi.target, pi.id`} LIMIT ${limit + 1}`;
  }
  const page = raw.slice(0, limit);
  const last = page[page.length - 1];
  return {
    view,
    rows: page.map((r) => ({
      id: String(r.id),
      target: r.target,
      recordId: r.record_id,
      action: r.action,
      tool: r.tool,
      key: r.key,
      epoch: r.epoch,
      state: r.state,
      changedBy: r.changed_by,
      changedAt: r.changed_at,
      inPlan: r.in_plan,
    })),
    next: raw.length > limit && last ? encodeCursor([last.target, String(last.id)]) : null,
  };
}
