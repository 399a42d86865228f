// The plan page: a run's latest plan with what an approver needs to decide (P1, P2), in three
// statements: the plan with its run, event and deciders; its first targets; whether any of its tools
// asks for a distinct approver.
import type { Db } from '../db/client.ts';
import { inScope, type WorkflowScope } from '@/lib/auth/grants.ts';
import { remember } from './common.ts';
import { isUuid } from '../uuid.ts';

type PlanRow = {
  id: string;
  run_id: string;
  status: string;
  author_kind: string;
  author_id: string;
  author_label: string;
  submitted_at: Date;
  approved_by_id: string | null;
  approved_at: Date | null;
  rejected_by_id: string | null;
  rejected_at: Date | null;
  rejection_reason: string | null;
  item_count: number;
  items_hash: string;
  workflow: string;
  trigger_id: string;
  approver_email: string | null;
  rejecter_email: string | null;
};

/** null for a run without a plan, or whose workflow is outside the viewer's scope (Z1). */
export async function latestPlanReview(db: Db, runId: string, scope: WorkflowScope, limit = 100) {
  if (!isUuid(runId)) return null;
  const [row] = await db.$queryRaw<PlanRow[]>`
    SELECT p.id, p.run_id, p.status::text AS status, p.author_kind::text AS author_kind, p.author_id, p.author_label,
           p.submitted_at, p.approved_by_id, p.approved_at, p.rejected_by_id, p.rejected_at, p.rejection_reason,
           p.item_count, p.items_hash, r.workflow, e.trigger_id, ua.email AS approver_email, ur.email AS rejecter_email
      FROM plan p
      JOIN run r ON r.id = p.run_id
      JOIN event e ON e.id = r.event_id
      LEFT JOIN app_user ua ON ua.id = p.approved_by_id
      LEFT JOIN app_user ur ON ur.id = p.rejected_by_id
     WHERE p.run_id = ${runId}::uuid
     ORDER BY p.submitted_at DESC LIMIT 1`;
  if (!row || !inScope(scope, row.workflow)) return null;
  // The run id leads the condition so that the (run_id, target, id) index yields the first page in
  // order; by plan id alone PostgreSQL would sort every item of the plan on each view.
  const items = await db.planItem.findMany({
    where: { runId, planId: row.id },
    orderBy: [{ target: 'asc' }, { id: 'asc' }],
    take: limit,
    select: { id: true, target: true, recordId: true, action: true, tool: true, key: true },
  });
  // The plan's tools, distinct in the database (Prisma's `distinct` reads every item into memory: a
  // million rows per view of a million-item plan). A submitted plan's items never change (P1 freezes
  // them, and a plan is written in the transaction that submits it), so the list is computed once per
  // process for a plan of any size.
  const distinctTools = async () =>
    (
      await db.$queryRaw<
        { tool: string }[]
      >`SELECT DISTINCT tool FROM plan_item WHERE plan_id = ${row.id}::uuid ORDER BY tool`
    ).map((t) => t.tool);
  const tools = (await remember(`plan-tools:${row.id}`, 24 * 3600_000, distinctTools)).value;
  // Tool settings can change at any time: read on every view.
  const strict = await db.toolDefinition.count({ where: { name: { in: tools }, distinctApprover: true } });
  return {
    plan: {
      id: row.id,
      runId: row.run_id,
      status: row.status,
      authorKind: row.author_kind,
      authorId: row.author_id,
      authorLabel: row.author_label,
      submittedAt: row.submitted_at,
      approvedById: row.approved_by_id,
      approvedAt: row.approved_at,
      rejectedById: row.rejected_by_id,
      rejectedAt: row.rejected_at,
      rejectionReason: row.rejection_reason,
      itemCount: row.item_count,
      itemsHash: row.items_hash,
      run: { workflow: row.workflow, event: { triggerId: row.trigger_id } },
    },
    approverLabel: row.approver_email,
    rejecterLabel: row.rejecter_email,
    items: items.map((i) => ({ ...i, id: String(i.id) })),
    tools,
    distinctApprover: strict > 0,
  };
}
