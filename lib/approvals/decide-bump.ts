// Deciding a four-eyes epoch bump (Z3, Z8). Another operator approves or rejects the request on the
// hash of the set they reviewed; an approval executes the bumps, each one re-checking its epoch, so a
// key that moved in between is reported instead of bumped. Every refusal is audited (A4) and the
// requester is told the outcome.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import { may, whoMay } from '../core/permissions.ts';
import { conflict, forbidden, invalid, notFound } from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { setHash, type BumpItem } from './bump-preview.ts';
import { runApprovedBumps } from './resume-bumps.ts';
import type { BumpContext } from './execute-bumps.ts';
import { fourEyesRefusal } from './four-eyes.ts';
import { refuseUnlessSeenStatus, seenStatusField } from './seen-status.ts';
import { optionalReasonField } from '@/lib/ledger/fields.ts';
import { notifyApprovalOutcome } from '@/lib/notifications/events.ts';

export const decideInput = z.strictObject({
  requestId: z.uuid(),
  /** The hash of the set the approver reviewed: binds the approval to exactly that set. */
  setHash: z.string().regex(/^[0-9a-f]{64}$/, 'the hash of the reviewed set'),
  decision: z.enum(['approve', 'reject']),
  reason: optionalReasonField,
  /** Z8: the request's status on the card the person decided from. */
  seenStatus: seenStatusField.optional(),
});

export async function decideBump(ctx: BumpContext, raw: unknown) {
  const input = parseInput(decideInput, raw);
  // The requester reads the rejection on the request's card: it has to say why (an approval's note is optional).
  if (input.decision === 'reject' && !input.reason) throw invalid('reason', 'reason: say why you reject the request');
  const { db, actor } = ctx;
  const request = await db.approvalRequest.findUnique({ where: { id: input.requestId } });
  if (!request || request.kind !== 'effect.bump')
    throw notFound(`approval request ${input.requestId} does not exist`, { field: 'requestId' });
  const action = input.decision === 'approve' ? 'approval.approve' : 'approval.reject';
  // Every refusal of a decision is audited (A4) on the request's chain, with what was asked.
  const auditRefused = (why: string) =>
    auditRefusal(db, {
      chain: `approval:${request.id}`,
      actor,
      action,
      subjectType: 'approval',
      subjectId: request.id,
      runId: request.runId,
      reason: input.reason ?? null,
      why,
      request: ctx.request,
    });
  const refuse = async (why: string) => {
    await auditRefused(why);
    return forbidden(why);
  };
  // Z1: the approver executes the bumps, so deciding is a party of the bump row (E2) too.
  if (!may(actor, 'effect.bump.approve'))
    throw await refuse(`only ${whoMay('effect.bump.approve')} decides epoch bumps`);
  const fourEyes = fourEyesRefusal(request.requestedById, actor, input.decision);
  if (fourEyes) throw await refuse(fourEyes);
  // Conflicts are refusals of a four-eyes decision too: audited (A4) with the same answer as before.
  const refuseConflict = async (why: string, extra: Record<string, unknown> = {}) => {
    await auditRefused(why);
    return conflict(why, extra);
  };
  await refuseUnlessSeenStatus(db, request.id, input.seenStatus);
  if (request.status !== 'open') throw await refuseConflict(`this request is already ${request.status}`);
  if (request.expiresAt.getTime() <= Date.now())
    throw await refuseConflict(`this request expired at ${request.expiresAt.toISOString()}; ask for a new one`);
  const items = (request.payload as unknown as { items: BumpItem[] }).items;
  if (input.setHash !== request.setHash || setHash(items) !== request.setHash) {
    throw await refuseConflict('the set changed since you reviewed it: review it again', { field: 'setHash' });
  }
  await db.$transaction(async (tx) => {
    const updated = await tx.approvalRequest.updateMany({
      where: { id: request.id, status: 'open', expiresAt: { gt: new Date() } },
      data: {
        status: input.decision === 'approve' ? 'approved' : 'rejected',
        decidedById: actor.id,
        decidedAt: new Date(),
      },
    });
    if (updated.count !== 1) {
      await refuseUnlessSeenStatus(tx, request.id, input.seenStatus);
      throw conflict('this request was decided or expired meanwhile');
    }
    await appendAudit(tx, {
      chain: `approval:${request.id}`,
      actor,
      action,
      subjectType: 'approval',
      subjectId: request.id,
      runId: request.runId,
      before: 'open',
      after: input.decision === 'approve' ? 'approved' : 'rejected',
      reason: input.reason ?? null,
      detail: { setHash: request.setHash, count: items.length, requestedById: request.requestedById },
      request: ctx.request,
    });
    await notifyApprovalOutcome(tx, request.id);
  });
  if (input.decision === 'reject') return { decision: 'reject' as const, bumped: 0, failed: [] };
  const { bumped, failed } = await runApprovedBumps(ctx, { ...request, items });
  return { decision: 'approve' as const, bumped, failed };
}
