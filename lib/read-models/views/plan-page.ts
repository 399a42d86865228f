// Everything the plan page shows (P1, P2): the run's latest plan with its first targets, and the
// decision the viewer may take on it. Whether the viewer may approve, and whether they authored the
// plan themselves, are settled here with their session: the page draws the outcome and never sees the
// grants. null when the run has no plan or lies outside the viewer's scope (Z1): the page answers both
// alike.
import { canOn } from '@/lib/auth/grants.ts';
import { latestPlanReview } from '@/lib/read-models/plan-review.ts';
import type { ConsoleViewer } from '@/lib/read-models/views/viewer.ts';

/** The first targets shown for a feel of the list; the run page pages through all of them with search. */
const PLAN_ROWS_SHOWN = 50;

export type PlanReview = NonNullable<Awaited<ReturnType<typeof latestPlanReview>>>;

export interface PlanPage extends PlanReview {
  /** The viewer holds plan.approve on the run's workflow. */
  canApprove: boolean;
  /** The viewer submitted this plan (a person, not the runtime): with a distinct-approver tool in it,
   *  another operator must approve (P2). */
  selfAuthored: boolean;
  /** Named to someone who may not approve ("Your role is …"). */
  role: string;
}

export async function planPage(v: ConsoleViewer, runId: string): Promise<PlanPage | null> {
  const review = await latestPlanReview(v.db, runId, v.scope, PLAN_ROWS_SHOWN);
  if (!review) return null;
  const { plan } = review;
  return {
    ...review,
    canApprove: canOn(v.user.grants, 'plan.approve', plan.run.workflow),
    selfAuthored: plan.authorKind === 'user' && plan.authorId === v.user.id,
    role: v.user.role,
  };
}
