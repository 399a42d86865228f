// Approve a submitted plan: from here on its items are frozen by the database (P1). Records who
// and when; where a tool asks for it, the approver must not be the author (P2). The approver
// confirms the hash of the set they reviewed, so a plan changed under them is not approved.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import { may, whoMay } from '@/lib/core/permissions.ts';
import { conflict, forbidden, LedgerError, notFound } from '../errors.ts';
import { StaleDecision } from '../seen.ts';
import { parseInput } from '../validate.ts';
import { itemsHash } from './submit-plan.ts';
import { getRun } from '../catalog.ts';
import { deriveKey } from '../keys.ts';
import type { CommandContext } from './common.ts';
import { optionalReasonField } from '../fields.ts';
import { refuseUnlessSeenPlan, seenPlanStatusField } from './plan-seen.ts';

export const approvePlanInput = z.strictObject({
  planId: z.uuid(),
  itemsHash: z.string().regex(/^[0-9a-f]{64}$/, 'the hash of the reviewed set'),
  reason: optionalReasonField,
  /** Z8: the plan's status as the page showed it. */
  seenStatus: seenPlanStatusField.optional(),
});

export async function approvePlan(ctx: CommandContext, raw: unknown) {
  const input = parseInput(approvePlanInput, raw);
  const { db, actor } = ctx;
  const plan = await db.plan.findUnique({ where: { id: input.planId } });
  if (!plan) throw notFound(`plan ${input.planId} does not exist`, { field: 'planId' });
  const record = (why: string) =>
    auditRefusal(db, {
      chain: `run:${plan.runId}`,
      actor,
      action: 'plan.approve',
      subjectType: 'plan',
      subjectId: plan.id,
      runId: plan.runId,
      before: plan.status,
      after: 'approved',
      why,
      request: ctx.request,
    });
  const refuse = async (why: string) => {
    await record(why);
    return forbidden(why);
  };
  // A4: refused approvals (wrong party, wrong state, a set other than the reviewed one) are recorded.
  const refuseConflict = async (why: string, extra: Record<string, unknown> = {}) => {
    await record(why);
    return conflict(why, extra);
  };
  if (!may(actor, 'plan.approve')) throw await refuse(`only ${whoMay('plan.approve')} approves plans`);
  await refuseUnlessSeenPlan(db, plan.id, { status: input.seenStatus, itemsHash: input.itemsHash });
  if (plan.status !== 'submitted')
    throw await refuseConflict(`plan ${plan.id} is ${plan.status}, not awaiting approval`);
  if (plan.itemsHash !== input.itemsHash)
    throw await refuseConflict('the plan changed since it was reviewed: review it again', {
      itemsHash: plan.itemsHash,
    });
  const tools = await db.planItem.findMany({ where: { planId: plan.id }, distinct: ['tool'], select: { tool: true } });
  const strict = await db.toolDefinition.count({
    where: { name: { in: tools.map((t) => t.tool) }, distinctApprover: true },
  });
  if (strict > 0 && plan.authorKind === 'user' && plan.authorId === actor.id) {
    throw await refuse('the approver of this plan must not be its author (P2)');
  }
  const approving = db.$transaction(
    async (tx) => {
      const updated = await tx.plan.updateMany({
        where: { id: plan.id, status: 'submitted', itemsHash: input.itemsHash },
        data: { status: 'approved', approvedById: actor.id, approvedAt: new Date() },
      });
      if (updated.count !== 1) {
        await refuseUnlessSeenPlan(tx, plan.id, { status: input.seenStatus, itemsHash: input.itemsHash });
        throw conflict(`plan ${plan.id} changed while it was being approved`);
      }
      // Bind the approval to the items themselves, not only to the hash stored at submission: an item
      // changed after review (by any path) must not be frozen under the reviewed hash. Read after the
      // plan row is locked by the update above; paged so a large plan never builds one huge value.
      // Each item's fields must still derive its key, so a target edited without its key is caught too.
      const { triggerId } = await getRun(tx, plan.runId);
      const keys: string[] = [];
      for (let after = -1n; ;) {
        const page = await tx.planItem.findMany({
          where: { planId: plan.id, id: { gt: after } },
          orderBy: { id: 'asc' },
          take: 50_000,
          select: { id: true, key: true, tool: true, action: true, recordId: true, target: true, targetType: true },
        });
        for (const item of page) {
          const derived = (() => {
            try {
              return deriveKey({
                triggerId,
                tool: item.tool,
                action: item.action,
                recordId: item.recordId,
                targetType: item.targetType,
                target: item.target,
              });
            } catch {
              return null;
            }
          })();
          if (!derived || derived.key !== item.key || derived.target !== item.target) {
            throw conflict(`plan item ${item.id} no longer matches its key: review the plan again`, {
              itemId: String(item.id),
            });
          }
          keys.push(item.key);
        }
        if (page.length < 50_000) break;
        after = page[page.length - 1]!.id;
      }
      if (keys.length !== plan.itemCount || itemsHash(keys) !== input.itemsHash) {
        throw conflict('the plan items no longer match the reviewed set: review it again', { items: keys.length });
      }
      await appendAudit(tx, {
        chain: `run:${plan.runId}`,
        actor,
        action: 'plan.approve',
        subjectType: 'plan',
        subjectId: plan.id,
        runId: plan.runId,
        before: 'submitted',
        after: 'approved',
        reason: input.reason ?? null,
        detail: { items: plan.itemCount, itemsHash: plan.itemsHash },
        request: ctx.request,
      });
      const approved = await tx.plan.findUniqueOrThrow({ where: { id: plan.id } });
      return {
        planId: approved.id,
        status: approved.status,
        approvedById: approved.approvedById,
        approvedAt: approved.approvedAt,
        itemCount: approved.itemCount,
      };
    },
    { timeout: 600_000 },
  );
  try {
    return await approving;
  } catch (error) {
    // Refused inside the transaction (rolled back): record the refusal outside it.
    if (error instanceof LedgerError && error.code === 'conflict' && !(error instanceof StaleDecision))
      await record(error.message);
    throw error;
  }
}
