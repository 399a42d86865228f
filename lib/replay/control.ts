// F5: start, pause, resume, cancel. Each is a status change plus its audit entry in one transaction;
// chunk jobs are queued only after the commit (a crash in between is healed by the worker's sweep,
// which queues the remaining items of any running replay without open jobs). Handlers re-read the
// status between items, so a pause or cancel takes effect within one send.
import { z } from 'zod';
import { appendAudit } from '../audit/append.ts';
import { env } from '../env.ts';
import { conflict, notFound } from '../ledger/index.ts';
import { StaleDecision } from '../ledger/seen.ts';
import { parseInput } from '../ledger/validate.ts';
import { exactlyOnce } from './set.ts';
import { enqueueRemaining, sharedJobSender, type JobSender } from './jobs.ts';
import { assertMayReplay, type ReplayControlAction, type ReplayCtx } from './request.ts';
import { optionalReasonField, reasonField } from '@/lib/ledger/fields.ts';

export const REPLAY_STATUSES = [
  'awaiting_approval',
  'approved',
  'running',
  'paused',
  'completed',
  'cancelled',
  'rejected',
  'expired',
] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];

/** Z8: the replay's status as the page showed it; a replay that moved since is a stale decision. */
const seenReplayStatusField = z.enum(REPLAY_STATUSES);

export const replayControlInput = z.strictObject({
  replayId: z.uuid(),
  reason: optionalReasonField,
  seenStatus: seenReplayStatusField.optional(),
});
export const cancelReplayInput = z.strictObject({
  replayId: z.uuid(),
  reason: reasonField,
  seenStatus: seenReplayStatusField.optional(),
});

export type ControlCtx = ReplayCtx & { jobs?: JobSender };

async function jobsOf(ctx: ControlCtx): Promise<JobSender> {
  if (ctx.jobs) return ctx.jobs;
  const url = env().DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set');
  return sharedJobSender(url);
}

async function move(
  ctx: ControlCtx,
  replayId: string,
  action: ReplayControlAction,
  from: ReplayStatus[],
  to: ReplayStatus,
  reason: string | null,
  seen: ReplayStatus | undefined,
) {
  const replay = await ctx.db.replay.findUnique({ where: { id: replayId } });
  if (!replay) throw notFound(`replay ${replayId} does not exist`, { field: 'replayId' });
  await assertMayReplay(ctx, action, replayId, replay.runId);
  if (seen && replay.status !== seen) throw await staleReplay(ctx, replayId, seen, from);
  return ctx.db.$transaction(async (tx) => {
    // The update is conditional on the status the person saw, so a move by someone else between the
    // read above and this statement is refused as stale too.
    const moved = await tx.replay.updateMany({
      where: { id: replayId, status: { in: seen ? from.filter((s) => s === seen) : from } },
      data: {
        status: to,
        ...(to === 'running' && !replay.startedAt ? { startedAt: new Date() } : {}),
        ...(to === 'cancelled' ? { finishedAt: new Date() } : {}),
      },
    });
    if (moved.count !== 1) {
      const now = await tx.replay.findUniqueOrThrow({ where: { id: replayId }, select: { status: true } });
      if (seen && now.status !== seen) throw await staleReplay(ctx, replayId, seen, from);
      throw conflict(`replay ${replayId} is ${now.status}; ${action.split('.')[1]} needs ${from.join(' or ')}`, {
        status: now.status,
      });
    }
    if (to === 'cancelled') {
      await tx.approvalRequest.updateMany({
        where: { kind: 'replay', status: 'open', payload: { path: ['replayId'], equals: replayId } },
        data: { status: 'cancelled', decidedById: ctx.actor.id, decidedAt: new Date() },
      });
    }
    await appendAudit(tx, {
      chain: `run:${replay.runId}`,
      actor: ctx.actor,
      action,
      subjectType: 'replay',
      subjectId: replayId,
      runId: replay.runId,
      before: replay.status,
      after: to,
      reason,
      // A cancelled replay's report keeps the run's figure at its end (as a completion records it).
      detail: to === 'cancelled' ? { exactlyOnceAfter: await exactlyOnce(tx, replay.runId) } : undefined,
      request: ctx.request,
    });
    return { replayId, runId: replay.runId, status: to, previous: replay.status as ReplayStatus };
  });
}

/** The facts of a replay that moved after the person looked: its status now, and who moved it last
 *  (the newest entry on its run's chain about it). */
async function staleReplay(ctx: ControlCtx, replayId: string, seen: ReplayStatus, from: ReplayStatus[]) {
  const now = await ctx.db.replay.findUniqueOrThrow({ where: { id: replayId }, select: { status: true } });
  const last = await ctx.db.auditEntry.findFirst({
    where: { subjectType: 'replay', subjectId: replayId, outcome: 'ok' },
    orderBy: { id: 'desc' },
    select: { actorLabel: true, at: true },
  });
  return new StaleDecision({
    subjectType: 'replay',
    subjectId: replayId,
    was: { state: seen },
    now: { state: now.status },
    changedBy: last?.actorLabel ?? null,
    changedAt: last?.at.toISOString() ?? null,
    retry: from.includes(now.status as ReplayStatus) ? { seenStatus: now.status } : {},
  });
}

/** After the commit: queue the chunks. If the job engine is unreachable the replay is still running
 *  and the worker's sweep queues its remaining items; the caller learns it from `queued: false`. */
async function enqueueAfterCommit(ctx: ControlCtx, replayId: string): Promise<{ chunks: number; queued: boolean }> {
  try {
    return { chunks: await enqueueRemaining(ctx.db, await jobsOf(ctx), replayId), queued: true };
  } catch (error) {
    console.error(
      `replay ${replayId}: could not queue chunks now (${(error as Error).message}); the worker's sweep will`,
    );
    return { chunks: 0, queued: false };
  }
}

export async function startReplay(ctx: ControlCtx, raw: unknown) {
  const input = parseInput(replayControlInput, raw);
  const result = await move(
    ctx,
    input.replayId,
    'replay.start',
    ['approved'],
    'running',
    input.reason ?? null,
    input.seenStatus,
  );
  return { ...result, ...(await enqueueAfterCommit(ctx, input.replayId)) };
}

export async function pauseReplay(ctx: ControlCtx, raw: unknown) {
  const input = parseInput(replayControlInput, raw);
  return move(ctx, input.replayId, 'replay.pause', ['running'], 'paused', input.reason ?? null, input.seenStatus);
}

export async function resumeReplay(ctx: ControlCtx, raw: unknown) {
  const input = parseInput(replayControlInput, raw);
  const result = await move(
    ctx,
    input.replayId,
    'replay.resume',
    ['paused'],
    'running',
    input.reason ?? null,
    input.seenStatus,
  );
  return { ...result, ...(await enqueueAfterCommit(ctx, input.replayId)) };
}

export async function cancelReplay(ctx: ControlCtx, raw: unknown) {
  const input = parseInput(cancelReplayInput, raw);
  return move(
    ctx,
    input.replayId,
    'replay.cancel',
    ['awaiting_approval', 'approved', 'running', 'paused'],
    'cancelled',
    input.reason,
    input.seenStatus,
  );
}
