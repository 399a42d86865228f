// F4 and Z3: the operator confirms the replay by typing the number of targets; the set is frozen at
// that moment as replay_item rows (one snapshot: count, hash and rows come from the same
// REPEATABLE READ transaction). Where four-eyes is on (default, per tool fourEyesReplay) the replay
// waits for another operator, whose approval is bound to the frozen set's hash and expires
// (approval.ts).
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import { sqlRows, type Db, type DbOrTx } from '../db/client.ts';
import { env } from '../env.ts';
import { conflict, forbidden, notFound, type Actor, type RequestMeta } from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { reasonField } from '@/lib/ledger/fields.ts';
import { StaleDecision } from '@/lib/ledger/seen.ts';
import { fourEyesFor } from './preview.ts';
import { exactlyOnce, FINGERPRINT_SQL, summarizeSet, targetsSql } from './set.ts';
import { notifyApprovalWaiting } from '@/lib/notifications/events.ts';
import { may, whoMay, type Permission } from '@/lib/core/permissions.ts';

export type ReplayControlAction = 'replay.start' | 'replay.pause' | 'replay.resume' | 'replay.cancel';

export interface ReplayCtx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

export const setHashField = z.string().regex(/^[0-9a-f]{64}$/, 'the set hash shown in the preview');

export const requestReplayInput = z.strictObject({
  runId: z.uuid(),
  /** The number of targets, typed by the operator (F4). */
  confirmCount: z.number().int().positive(),
  /** The preview's setHash: refuses if the set changed since the operator looked. */
  setHash: setHashField.optional(),
  reason: reasonField,
});

type ReplayAction = 'replay.request' | 'replay.approve' | 'replay.reject' | ReplayControlAction;

/** The permission each replay action needs (Z1): rejecting is the other answer of an approver, and
 *  start, pause, resume and cancel are control. */
export function replayPermission(action: ReplayAction): Permission {
  if (action === 'replay.request') return 'replay.request';
  if (action === 'replay.approve' || action === 'replay.reject') return 'replay.approve';
  return 'replay.control';
}

/** Refuses, audited (A4), an actor the permission table does not allow `action`. */
export async function assertMayReplay(
  ctx: ReplayCtx,
  action: ReplayAction,
  subjectId: string,
  runId: string | null,
): Promise<void> {
  const permission = replayPermission(action);
  if (may(ctx.actor, permission)) return;
  const why = `only ${whoMay(permission)} forces replays (Z1)`;
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
  await assertMayReplay(ctx, 'replay.request', input.runId, input.runId);
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

/** The set the operator confirmed is not the set now: who changed the run's targets last, and when. */
async function refuseStaleSet(
  db: DbOrTx,
  input: z.output<typeof requestReplayInput>,
  summary: { eligible: number; setHash: string },
): Promise<never> {
  const [last] = await sqlRows<{ changed_by: string; changed_at: Date }>(
    db,
    `SELECT changed_by, changed_at FROM effect_key WHERE run_id = $1::uuid ORDER BY changed_at DESC LIMIT 1`,
    [input.runId],
  );
  throw new StaleDecision({
    subjectType: 'replay',
    subjectId: input.runId,
    was: { state: `${input.confirmCount} to send`, hash: input.setHash },
    now: { state: `${summary.eligible} to send`, hash: summary.setHash },
    changedBy: last?.changed_by ?? null,
    changedAt: last?.changed_at.toISOString() ?? null,
    // The operator types the new count again (F4): only the set's hash is carried over.
    retry: { setHash: summary.setHash },
  });
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
      // Z8: a set that changed since the preview is stale before anything else (its count changed too).
      if (input.setHash && input.setHash !== summary.setHash) await refuseStaleSet(tx, input, summary);
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
      if (approval) await notifyApprovalWaiting(tx, approval.id);
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
