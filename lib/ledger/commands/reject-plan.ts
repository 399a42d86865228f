// Reject a submitted plan (P2): an operator says no, with a reason, and the run's agent must submit
// a new plan. Nothing is frozen and nothing can be sent under a rejected plan; who rejected it, when
// and why stay on the plan and on the run's audit chain.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import { may, whoMay } from '@/lib/core/permissions.ts';
import { getRun } from '../catalog.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { reasonField } from '../fields.ts';
import { requireWorkflowScope } from '../scope.ts';
import { parseInput } from '../validate.ts';
import type { CommandContext } from './common.ts';
import { refuseUnlessSeenPlan, seenPlanStatusField } from './plan-seen.ts';

export const rejectPlanInput = z.strictObject({
  planId: z.uuid(),
  reason: reasonField,
  /** Z8: the plan's status and items hash as the page showed them. */
  seenStatus: seenPlanStatusField.optional(),
  itemsHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'the hash of the reviewed set')
    .optional(),
});

export async function rejectPlan(ctx: CommandContext, raw: unknown) {
  const input = parseInput(rejectPlanInput, raw);
  const { db, actor } = ctx;
  const plan = await db.plan.findUnique({ where: { id: input.planId } });
  if (!plan) throw notFound(`plan ${input.planId} does not exist`, { field: 'planId' });
  const refusal = {
    chain: `run:${plan.runId}`,
    actor,
    action: 'plan.reject',
    subjectType: 'plan',
    subjectId: plan.id,
    runId: plan.runId,
    before: plan.status,
    after: 'rejected',
    reason: input.reason,
    request: ctx.request,
  } as const;
  // Rejecting is the other answer to the same review: whoever may approve a plan may reject it.
  if (!may(actor, 'plan.approve')) {
    const why = `only ${whoMay('plan.approve')} rejects plans`;
    await auditRefusal(db, { ...refusal, why });
    throw forbidden(why);
  }
  await requireWorkflowScope(ctx, (await getRun(db, plan.runId)).workflow, refusal);
  const seen = { status: input.seenStatus, itemsHash: input.itemsHash };
  await refuseUnlessSeenPlan(db, plan.id, seen);
  return db.$transaction(async (tx) => {
    const updated = await tx.plan.updateMany({
      where: { id: plan.id, status: 'submitted' },
      data: { status: 'rejected', rejectedById: actor.id, rejectedAt: new Date(), rejectionReason: input.reason },
    });
    if (updated.count !== 1) {
      await refuseUnlessSeenPlan(tx, plan.id, seen);
      const now = await tx.plan.findUniqueOrThrow({ where: { id: plan.id }, select: { status: true } });
      throw conflict(`plan ${plan.id} is ${now.status}, not awaiting a decision`, { status: now.status });
    }
    await appendAudit(tx, { ...refusal, detail: { items: plan.itemCount, itemsHash: plan.itemsHash } });
    return { planId: plan.id, status: 'rejected' as const };
  });
}
