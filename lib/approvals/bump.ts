// Four-eyes epoch bumps (Z3, E2). An operator asks for a bump of an exact set of (key, epoch)
// pairs; the request is bound to the SHA-256 of that set and expires. Another operator approves
// the same hash, and only then are the bumps executed, each one re-checking its epoch, so a key
// that moved in between is reported instead of bumped. Tools registered with fourEyesBump=false
// (default on) are bumped directly.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import {
  bumpEpoch,
  checkTransition,
  conflict,
  forbidden,
  invalid,
  LedgerError,
  notFound,
  partyOf,
  type Actor,
  type RequestMeta,
} from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { decideOnSeenEffect, lockSeenEffect, seenEffectField, StaleDecision, type SeenEffect } from '../ledger/seen.ts';
import { BUMP_APPROVAL_TTL_HOURS } from './expiry.ts';
import { fourEyesRefusal } from './four-eyes.ts';
import { refuseUnlessSeenStatus, seenStatusField } from './seen-status.ts';
import { effectKeyField, effectKeysField, optionalReasonField, reasonField } from '@/lib/ledger/fields.ts';
import { notifyApprovalOutcome, notifyApprovalWaiting } from '@/lib/notifications/events.ts';

export const APPROVAL_TTL_HOURS = BUMP_APPROVAL_TTL_HOURS;
export const MAX_BULK = 10_000;

interface Ctx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

export interface BumpItem {
  key: string;
  epoch: number;
}

export function setHash(items: readonly BumpItem[]): string {
  const h = createHash('sha256');
  for (const line of items.map((i) => `${i.key}\u0000${i.epoch}`).sort()) h.update(line).update('\n');
  return h.digest('hex');
}

export const requestBumpInput = z.strictObject({
  keys: effectKeysField,
  reason: reasonField,
  /** Z8: per key, the version the person was shown; a key that changed since refuses the request. */
  seen: z.record(effectKeyField, seenEffectField).optional(),
});

/** Z8: throws StaleDecision when a key the person saw changed since; under a row lock inside a transaction. */
async function checkSeen(db: Parameters<typeof lockSeenEffect>[0], seen: Record<string, SeenEffect> | undefined) {
  for (const [key, version] of Object.entries(seen ?? {})) await lockSeenEffect(db, key, version);
}

export interface BumpPreview {
  eligible: (BumpItem & { state: string; target: string; tool: string })[];
  blocked: { key: string; state: string; why: string }[];
  missing: string[];
  fourEyes: boolean;
  setHash: string;
}

/** What a bump of these keys would do, without doing it (the preview the operator confirms). */
export async function previewBump(db: Db, keys: readonly string[]): Promise<BumpPreview> {
  const unique = [...new Set(keys)];
  const rows = await db.effectKey.findMany({
    where: { key: { in: unique } },
    select: { key: true, state: true, currentEpoch: true, target: true, tool: true },
  });
  const found = new Map(rows.map((r) => [r.key, r]));
  const eligible: BumpPreview['eligible'] = [];
  const blocked: BumpPreview['blocked'] = [];
  for (const r of rows) {
    if (r.state === 'done' || r.state === 'revoked' || r.state === 'stuck')
      eligible.push({ key: r.key, epoch: r.currentEpoch, state: r.state, target: r.target, tool: r.tool });
    else
      blocked.push({
        key: r.key,
        state: r.state,
        why: `${r.state} blocks a bump (E2): only done, revoked or stuck can be superseded`,
      });
  }
  const tools = [...new Set(eligible.map((e) => e.tool))];
  const lax = await db.toolDefinition.count({ where: { name: { in: tools }, fourEyesBump: false } });
  return {
    eligible,
    blocked,
    missing: unique.filter((k) => !found.has(k)),
    fourEyes: tools.length === 0 || lax < tools.length,
    setHash: setHash(eligible),
  };
}

export type RequestBumpResult =
  | { mode: 'requested'; requestId: string; setHash: string; count: number; blocked: number; expiresAt: Date }
  | { mode: 'executed'; bumped: number; failed: { key: string; error: string }[]; blocked: number };

export async function requestBump(ctx: Ctx, raw: unknown): Promise<RequestBumpResult> {
  const input = parseInput(requestBumpInput, raw);
  const { db, actor } = ctx;
  const permitted = checkTransition('done', 'new_epoch', partyOf(actor));
  if (!permitted.allowed) {
    await auditRefusal(db, {
      chain: 'approvals',
      actor,
      action: 'approval.request',
      subjectType: 'approval',
      subjectId: 'effect.bump',
      reason: input.reason,
      why: permitted.why,
      request: ctx.request,
    });
    throw forbidden(permitted.why);
  }
  // What the person saw is checked first: a key that moved is stale, not merely blocked.
  await checkSeen(db, input.seen);
  const preview = await previewBump(db, input.keys);
  if (preview.eligible.length === 0) {
    throw invalid('keys', preview.blocked[0]?.why ?? `no such key: ${preview.missing[0] ?? ''}`, {
      blocked: preview.blocked.length,
      missing: preview.missing.length,
    });
  }
  if (!preview.fourEyes) {
    const { bumped, failed } = await executeBumps(ctx, preview.eligible, input.reason, undefined, input.seen);
    return { mode: 'executed', bumped, failed, blocked: preview.blocked.length };
  }
  const items = preview.eligible.map(({ key, epoch }) => ({ key, epoch }));
  const runIds = await db.effectKey.findMany({
    where: { key: { in: items.slice(0, 1).map((i) => i.key) } },
    select: { runId: true },
  });
  const expiresAt = new Date(Date.now() + APPROVAL_TTL_HOURS * 3_600_000);
  const created = await db.$transaction(async (tx) => {
    await checkSeen(tx, input.seen);
    const request = await tx.approvalRequest.create({
      data: {
        kind: 'effect.bump',
        runId: runIds[0]?.runId ?? null,
        payload: { items },
        setHash: preview.setHash,
        reason: input.reason,
        requestedById: actor.id,
        expiresAt,
      },
    });
    await appendAudit(tx, {
      chain: `approval:${request.id}`,
      actor,
      action: 'approval.request',
      subjectType: 'approval',
      subjectId: request.id,
      runId: request.runId,
      after: 'open',
      reason: input.reason,
      detail: {
        kind: 'effect.bump',
        count: items.length,
        setHash: preview.setHash,
        expiresAt: expiresAt.toISOString(),
      },
      request: ctx.request,
    });
    await notifyApprovalWaiting(tx, request.id);
    return request;
  });
  return {
    mode: 'requested',
    requestId: created.id,
    setHash: preview.setHash,
    count: items.length,
    blocked: preview.blocked.length,
    expiresAt,
  };
}

async function executeBumps(
  ctx: Ctx,
  items: readonly BumpItem[],
  why: string,
  approvalRequestId?: string,
  seen?: Record<string, SeenEffect>,
) {
  let bumped = 0;
  const failed: { key: string; error: string }[] = [];
  for (const item of items) {
    try {
      await decideOnSeenEffect(ctx.db, item.key, seen?.[item.key], (db) =>
        bumpEpoch(
          { ...ctx, db },
          {
            key: item.key,
            expectedEpoch: item.epoch,
            reason: why,
            ...(approvalRequestId ? { approvalRequestId } : {}),
          },
        ),
      );
      bumped++;
    } catch (error) {
      if (!(error instanceof LedgerError)) throw error;
      if (error instanceof StaleDecision && items.length === 1) throw error;
      failed.push({ key: item.key, error: error.message });
    }
  }
  return { bumped, failed };
}

export const decideInput = z.strictObject({
  requestId: z.uuid(),
  /** The hash of the set the approver reviewed: binds the approval to exactly that set. */
  setHash: z.string().regex(/^[0-9a-f]{64}$/, 'the hash of the reviewed set'),
  decision: z.enum(['approve', 'reject']),
  reason: optionalReasonField,
  /** Z8: the request's status on the card the person decided from. */
  seenStatus: seenStatusField.optional(),
});

export async function decideBump(ctx: Ctx, raw: unknown) {
  const input = parseInput(decideInput, raw);
  // The requester reads the rejection on the request's card: it has to say why (an approval's note is optional).
  if (input.decision === 'reject' && !input.reason) throw invalid('reason', 'reason: say why you reject the request');
  const { db, actor } = ctx;
  const request = await db.approvalRequest.findUnique({ where: { id: input.requestId } });
  if (!request || request.kind !== 'effect.bump')
    throw notFound(`approval request ${input.requestId} does not exist`, { field: 'requestId' });
  const action = input.decision === 'approve' ? 'approval.approve' : 'approval.reject';
  const refuse = async (why: string) => {
    await auditRefusal(db, {
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
    return forbidden(why);
  };
  const permitted = checkTransition('done', 'new_epoch', partyOf(actor));
  if (!permitted.allowed) throw await refuse(permitted.why);
  const fourEyes = fourEyesRefusal(request.requestedById, actor, input.decision);
  if (fourEyes) throw await refuse(fourEyes);
  // Conflicts are refusals of a four-eyes decision too: audited (A4) with the same answer as before.
  const refuseConflict = async (why: string, extra: Record<string, unknown> = {}) => {
    await auditRefusal(db, {
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
  const { bumped, failed } = await executeBumps(ctx, items, `${request.reason} (four-eyes approved)`, request.id);
  return { decision: 'approve' as const, bumped, failed };
}
