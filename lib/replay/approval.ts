// Z3: the decision on a replay request that waits for four eyes. Another operator approves it, bound
// to the hash of the frozen set they were shown and before the request expires; or rejects it.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import { conflict, forbidden, notFound } from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { fourEyesRefusal } from '@/lib/approvals/four-eyes.ts';
import { refuseUnlessSeenStatus, seenStatusField } from '@/lib/approvals/seen-status.ts';
import { optionalReasonField, reasonField } from '@/lib/ledger/fields.ts';
import { assertMayReplay, setHashField, type ReplayCtx } from './request.ts';
import { notifyApprovalOutcome } from '@/lib/notifications/events.ts';

export const approveReplayInput = z.strictObject({
  approvalRequestId: z.uuid(),
  /** The hash the approver saw; must equal the frozen set's (Z3). */
  setHash: setHashField,
  reason: optionalReasonField,
  /** Z8: the request's status as the person saw it. */
  seenStatus: seenStatusField.optional(),
});

export const rejectReplayInput = z.strictObject({
  approvalRequestId: z.uuid(),
  reason: reasonField,
  seenStatus: seenStatusField.optional(),
});

async function loadApproval(ctx: ReplayCtx, id: string) {
  const req = await ctx.db.approvalRequest.findUnique({ where: { id } });
  if (!req || req.kind !== 'replay')
    throw notFound(`replay approval request ${id} does not exist`, { field: 'approvalRequestId' });
  const replayId = (req.payload as { replayId: string }).replayId;
  return { req, replayId };
}

export async function approveReplay(ctx: ReplayCtx, raw: unknown) {
  const input = parseInput(approveReplayInput, raw);
  const { db, actor } = ctx;
  const { req, replayId } = await loadApproval(ctx, input.approvalRequestId);
  await assertMayReplay(ctx, 'replay.approve', replayId, req.runId);
  // Every entry of this decision is about the same replay of the same run.
  const entry = {
    chain: `run:${req.runId}`,
    actor,
    action: 'replay.approve',
    subjectType: 'replay',
    subjectId: replayId,
    runId: req.runId,
    request: ctx.request,
  } as const;
  /** Writes the refusal to the trail (A4) and gives back the error to throw. */
  const refused = async <E>(why: string, error: E): Promise<E> => {
    await auditRefusal(db, { ...entry, why });
    return error;
  };
  const fourEyes = fourEyesRefusal(req.requestedById, actor, 'approve');
  if (fourEyes) throw await refused(fourEyes, forbidden(fourEyes));
  await refuseUnlessSeenStatus(db, req.id, input.seenStatus);
  if (req.status !== 'open') {
    const why = `this request is ${req.status}`;
    throw await refused(why, conflict(why));
  }
  if (req.setHash !== input.setHash) {
    const why = 'the approval does not match the frozen set: review the request again';
    throw await refused(why, conflict(why, { field: 'setHash', setHash: req.setHash }));
  }
  return db.$transaction(async (tx) => {
    const [now] = await tx.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    if (req.expiresAt <= now!.now) {
      await tx.approvalRequest.updateMany({ where: { id: req.id, status: 'open' }, data: { status: 'expired' } });
      await tx.replay.updateMany({
        where: { id: replayId, status: 'awaiting_approval' },
        data: { status: 'expired', finishedAt: now!.now },
      });
      await appendAudit(tx, { ...entry, outcome: 'refused', detail: { why: 'the approval request expired (Z3)' } });
      await notifyApprovalOutcome(tx, req.id);
      return { replayId, status: 'expired' as const, approvedById: null };
    }
    const a = await tx.approvalRequest.updateMany({
      where: { id: req.id, status: 'open', setHash: input.setHash },
      data: { status: 'approved', decidedById: actor.id, decidedAt: now!.now },
    });
    const r = await tx.replay.updateMany({
      where: { id: replayId, status: 'awaiting_approval', setHash: input.setHash },
      data: { status: 'approved', approvedById: actor.id },
    });
    if (a.count !== 1 || r.count !== 1) {
      await refuseUnlessSeenStatus(tx, req.id, input.seenStatus);
      throw conflict('the request was decided or cancelled meanwhile');
    }
    await appendAudit(tx, {
      ...entry,
      before: 'awaiting_approval',
      after: 'approved',
      reason: input.reason ?? null,
      // What the approver decided on (the frozen set's hash and the request's status they saw) and whose
      // request it was: the trail alone shows who approved which set, when, and that it was a second person.
      detail: {
        approvalRequestId: req.id,
        setHash: req.setHash,
        seenStatus: input.seenStatus ?? null,
        requestedById: req.requestedById,
        requestedAt: req.requestedAt.toISOString(),
      },
    });
    await notifyApprovalOutcome(tx, req.id);
    return { replayId, status: 'approved' as const, approvedById: actor.id };
  });
}

export async function rejectReplay(ctx: ReplayCtx, raw: unknown) {
  const input = parseInput(rejectReplayInput, raw);
  const { db, actor } = ctx;
  const { req, replayId } = await loadApproval(ctx, input.approvalRequestId);
  await assertMayReplay(ctx, 'replay.reject', replayId, req.runId);
  await refuseUnlessSeenStatus(db, req.id, input.seenStatus);
  return db.$transaction(async (tx) => {
    const a = await tx.approvalRequest.updateMany({
      where: { id: req.id, status: 'open' },
      data: { status: 'rejected', decidedById: actor.id, decidedAt: new Date() },
    });
    if (a.count !== 1) {
      await refuseUnlessSeenStatus(tx, req.id, input.seenStatus);
      throw conflict(`this request is ${req.status}`);
    }
    await tx.replay.updateMany({
      where: { id: replayId, status: 'awaiting_approval' },
      data: { status: 'rejected', finishedAt: new Date() },
    });
    await appendAudit(tx, {
      chain: `run:${req.runId}`,
      actor,
      action: 'replay.reject',
      subjectType: 'replay',
      subjectId: replayId,
      runId: req.runId,
      before: 'awaiting_approval',
      after: 'rejected',
      reason: input.reason,
      request: ctx.request,
      detail: {
        approvalRequestId: req.id,
        setHash: req.setHash,
        seenStatus: input.seenStatus ?? null,
        requestedById: req.requestedById,
        requestedAt: req.requestedAt.toISOString(),
      },
    });
    await notifyApprovalOutcome(tx, req.id);
    return { replayId, status: 'rejected' as const };
  });
}
