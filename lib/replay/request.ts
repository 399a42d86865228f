// F4 and Z3: the operator confirms the replay by typing the number of targets; the set is frozen at
// that moment as replay_item rows (one snapshot: count, hash and rows come from the same
// REPEATABLE READ transaction). Where four-eyes is on (default, per tool fourEyesReplay) the replay
// waits for another operator, whose approval is bound to the frozen set's hash and expires.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import { env } from '../env.ts';
import { conflict, forbidden, notFound, type Actor, type RequestMeta } from '../ledger/index.ts';
import { fourEyesRefusal } from '@/lib/approvals/four-eyes.ts';
import { parseInput } from '../ledger/validate.ts';

export type ReplayControlAction = 'replay.start' | 'replay.pause' | 'replay.resume' | 'replay.cancel';
import { fourEyesFor } from './preview.ts';
import { exactlyOnce, FINGERPRINT_SQL, summarizeSet, targetsSql } from './set.ts';
import { reasonField, optionalReasonField } from '@/lib/ledger/fields.ts';

export interface ReplayCtx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

const hash = z.string().regex(/^[0-9a-f]{64}$/, 'the set hash shown in the preview');

export const requestReplayInput = z.strictObject({
  runId: z.uuid(),
  /** The number of targets, typed by the operator (F4). */
  confirmCount: z.number().int().positive(),
  /** The preview's setHash: refuses if the set changed since the operator looked. */
  setHash: hash.optional(),
  reason: reasonField,
});

export const approveReplayInput = z.strictObject({
  approvalRequestId: z.uuid(),
  /** The hash the approver saw; must equal the frozen set's (Z3). */
  setHash: hash,
  reason: optionalReasonField,
});

export const rejectReplayInput = z.strictObject({ approvalRequestId: z.uuid(), reason: reasonField });

export async function assertOperator(
  ctx: ReplayCtx,
  action: 'replay.request' | 'replay.approve' | 'replay.reject' | ReplayControlAction,
  subjectId: string,
  runId: string | null,
): Promise<void> {
  if (ctx.actor.kind === 'user' && ctx.actor.role === 'operator') return;
  const why = 'only an operator forces replays (Z1)';
  await auditRefusal(ctx.db, {
    chain: runId ? `run:${runId}` : 'replays',
    actor: ctx.actor,
    action,
    subjectType: 'replay',
    subjectId,
    runId,
    why,
    request: ctx.request,
  });
  throw forbidden(why);
}

export interface RequestReplayResult {
  replayId: string;
  status: 'awaiting_approval' | 'approved';
  total: number;
  setHash: string;
  approvalRequestId: string | null;
  expiresAt: Date | null;
}

export async function requestReplay(ctx: ReplayCtx, raw: unknown): Promise<RequestReplayResult> {
  const input = parseInput(requestReplayInput, raw);
  const { db } = ctx;
  await assertOperator(ctx, 'replay.request', input.runId, input.runId);
  const run = await db.run.findUnique({ where: { id: input.runId }, select: { id: true } });
  if (!run) throw notFound(`run ${input.runId} does not exist`, { field: 'runId' });
  const fourEyes = await fourEyesFor(db, input.runId);
  const ttlMinutes = env().REPLAY_APPROVAL_TTL_MINUTES;
  // One snapshot for count, hash and frozen rows. Two operators confirming the same run at once
  // conflict on the run's audit chain head: the loser retries on a fresh snapshot.
  for (let attempt = 1; ; attempt++) {
    try {
      return await freeze(ctx, input, fourEyes, ttlMinutes);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (
        attempt >= 8 ||
        (code !== 'P2034' && !/could not serialize|write conflict|deadlock/i.test((error as Error).message))
      )
        throw error;
    }
  }
}

async function freeze(
  ctx: ReplayCtx,
  input: z.output<typeof requestReplayInput>,
  fourEyes: boolean,
  ttlMinutes: number,
): Promise<RequestReplayResult> {
  const { db, actor } = ctx;
  return db.$transaction(
    async (tx) => {
      const summary = await summarizeSet(tx, input.runId);
      if (summary.eligible === 0)
        throw conflict('no target of this run is eligible for a replay', { counts: summary.counts });
      if (input.confirmCount !== summary.eligible) {
        throw conflict(
          `you confirmed ${input.confirmCount} targets but ${summary.eligible} would be sent: review the preview again`,
          { field: 'confirmCount', eligible: summary.eligible, setHash: summary.setHash },
        );
      }
      if (input.setHash && input.setHash !== summary.setHash) {
        throw conflict('the set changed since the preview: review it again', {
          field: 'setHash',
          setHash: summary.setHash,
          eligible: summary.eligible,
        });
      }
      const before = await exactlyOnce(tx, input.runId);
      const replay = await tx.replay.create({
        data: {
          runId: input.runId,
          status: fourEyes ? 'awaiting_approval' : 'approved',
          requestedById: actor.id,
          reason: input.reason,
          setHash: summary.setHash,
          total: summary.eligible,
          approvedById: null,
        },
      });
      await tx.$executeRaw`
        INSERT INTO replay_item (replay_id, key, epoch, target, note)
        SELECT ${replay.id}::uuid, t.key, t.epoch, t.target, 'frozen:' || ${FINGERPRINT_SQL}
          FROM (${targetsSql(input.runId)}) t
         WHERE t.view_state IN ('not_sent', 'awaiting_claim', 'failed')
         ORDER BY t.item_id`;
      let approval: { id: string; expiresAt: Date } | null = null;
      if (fourEyes) {
        approval = await tx.approvalRequest.create({
          data: {
            kind: 'replay',
            runId: input.runId,
            payload: { replayId: replay.id, count: summary.eligible },
            setHash: summary.setHash,
            reason: input.reason,
            requestedById: actor.id,
            expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
          },
          select: { id: true, expiresAt: true },
        });
      }
      await appendAudit(tx, {
        chain: `run:${input.runId}`,
        actor,
        action: 'replay.request',
        subjectType: 'replay',
        subjectId: replay.id,
        runId: input.runId,
        after: replay.status,
        reason: input.reason,
        request: ctx.request,
        detail: {
          count: summary.eligible,
          setHash: summary.setHash,
          counts: summary.counts,
          fourEyes,
          approvalRequestId: approval?.id ?? null,
          exactlyOnceBefore: before,
        },
      });
      return {
        replayId: replay.id,
        status: replay.status as RequestReplayResult['status'],
        total: summary.eligible,
        setHash: summary.setHash,
        approvalRequestId: approval?.id ?? null,
        expiresAt: approval?.expiresAt ?? null,
      };
    },
    { isolationLevel: 'RepeatableRead', timeout: 600_000, maxWait: 30_000 },
  );
}

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
  await assertOperator(ctx, 'replay.approve', replayId, req.runId);
  const refuse = async (why: string) => {
    await auditRefusal(db, {
      chain: `run:${req.runId}`,
      actor,
      action: 'replay.approve',
      subjectType: 'replay',
      subjectId: replayId,
      runId: req.runId,
      why,
      request: ctx.request,
    });
    return forbidden(why);
  };
  const fourEyes = fourEyesRefusal(req.requestedById, actor, 'approve');
  if (fourEyes) throw await refuse(fourEyes);
  const refuseConflict = async (why: string, extra: Record<string, unknown> = {}) => {
    await auditRefusal(db, {
      chain: `run:${req.runId}`,
      actor,
      action: 'replay.approve',
      subjectType: 'replay',
      subjectId: replayId,
      runId: req.runId,
      why,
      request: ctx.request,
    });
    return conflict(why, extra);
  };
  if (req.status !== 'open') throw await refuseConflict(`this request is ${req.status}`);
  if (req.setHash !== input.setHash)
    throw await refuseConflict('the approval does not match the frozen set: review the request again', {
      field: 'setHash',
      setHash: req.setHash,
    });
  return db.$transaction(async (tx) => {
    const [now] = await tx.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    if (req.expiresAt <= now!.now) {
      await tx.approvalRequest.updateMany({ where: { id: req.id, status: 'open' }, data: { status: 'expired' } });
      await tx.replay.updateMany({
        where: { id: replayId, status: 'awaiting_approval' },
        data: { status: 'expired', finishedAt: now!.now },
      });
      await appendAudit(tx, {
        chain: `run:${req.runId}`,
        actor,
        action: 'replay.approve',
        subjectType: 'replay',
        subjectId: replayId,
        runId: req.runId,
        outcome: 'refused',
        detail: { why: 'the approval request expired (Z3)' },
        request: ctx.request,
      });
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
    if (a.count !== 1 || r.count !== 1) throw conflict('the request was decided or cancelled meanwhile');
    await appendAudit(tx, {
      chain: `run:${req.runId}`,
      actor,
      action: 'replay.approve',
      subjectType: 'replay',
      subjectId: replayId,
      runId: req.runId,
      before: 'awaiting_approval',
      after: 'approved',
      reason: input.reason ?? null,
      detail: { approvalRequestId: req.id, setHash: req.setHash },
      request: ctx.request,
    });
    return { replayId, status: 'approved' as const, approvedById: actor.id };
  });
}

export async function rejectReplay(ctx: ReplayCtx, raw: unknown) {
  const input = parseInput(rejectReplayInput, raw);
  const { db, actor } = ctx;
  const { req, replayId } = await loadApproval(ctx, input.approvalRequestId);
  await assertOperator(ctx, 'replay.reject', replayId, req.runId);
  return db.$transaction(async (tx) => {
    const a = await tx.approvalRequest.updateMany({
      where: { id: req.id, status: 'open' },
      data: { status: 'rejected', decidedById: actor.id, decidedAt: new Date() },
    });
    if (a.count !== 1) throw conflict(`this request is ${req.status}`);
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
    });
    return { replayId, status: 'rejected' as const };
  });
}
