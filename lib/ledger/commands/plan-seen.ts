// Z8 for plan decisions: approve or reject carries the plan's status and items hash as the page
// showed them. A plan another operator decided meanwhile, or whose items changed, is a stale
// decision: nothing is written and the answer names what it is now, who decided it and when.
import { z } from 'zod';
import type { DbOrTx } from '@/lib/db/client.ts';
import { StaleDecision } from '../seen.ts';

export const seenPlanStatusField = z.enum(['submitted', 'approved', 'rejected']);

export async function refuseUnlessSeenPlan(
  db: DbOrTx,
  planId: string,
  seen: { status?: string; itemsHash?: string },
): Promise<void> {
  if (seen.status === undefined) return;
  const plan = await db.plan.findUnique({ where: { id: planId } });
  if (!plan) return;
  const sameStatus = plan.status === seen.status;
  if (sameStatus && (seen.itemsHash === undefined || seen.itemsHash === plan.itemsHash)) return;
  const deciderId =
    plan.status === 'approved' ? plan.approvedById : plan.status === 'rejected' ? plan.rejectedById : null;
  const decider = deciderId ? await db.user.findUnique({ where: { id: deciderId }, select: { email: true } }) : null;
  const at =
    plan.status === 'approved' ? plan.approvedAt : plan.status === 'rejected' ? plan.rejectedAt : plan.submittedAt;
  throw new StaleDecision({
    subjectType: 'plan',
    subjectId: planId,
    was: { state: seen.status, ...(seen.itemsHash ? { hash: seen.itemsHash } : {}) },
    now: { state: plan.status, hash: plan.itemsHash },
    changedBy: decider?.email ?? (plan.status === 'submitted' ? plan.authorLabel : null),
    changedAt: at?.toISOString() ?? null,
    // Only a plan still awaiting a decision can be decided again, on the items it holds now.
    retry: plan.status === 'submitted' ? { seenStatus: plan.status, itemsHash: plan.itemsHash } : {},
  });
}
