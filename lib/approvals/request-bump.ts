// Asking for an epoch bump (Z3, E2, Z8). An operator asks for a bump of an exact set of (key, epoch)
// pairs; the request is bound to the SHA-256 of that set and expires, and every eligible approver is
// told. Tools registered with fourEyesBump=false (default on) are bumped directly.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import { may, whoMay } from '../core/permissions.ts';
import { forbidden, invalid } from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { lockSeenEffect, seenEffectField, type SeenEffect } from '../ledger/seen.ts';
import { previewBump } from './bump-preview.ts';
import { executeBumps, type BumpContext } from './execute-bumps.ts';
import { BUMP_APPROVAL_TTL_HOURS } from './expiry.ts';
import { effectKeyField, effectKeysField, reasonField } from '@/lib/ledger/fields.ts';
import { notifyApprovalWaiting } from '@/lib/notifications/events.ts';
import { workflowsOfSubject } from '@/lib/auth/subject-workflows.ts';

export const APPROVAL_TTL_HOURS = BUMP_APPROVAL_TTL_HOURS;
export const MAX_BULK = 10_000;

export const requestBumpInput = z
  .strictObject({
    keys: effectKeysField,
    reason: reasonField,
    /** Z8: per key, the version the person was shown; a key that changed since refuses the request. */
    seen: z.record(effectKeyField, seenEffectField).optional(),
  })
  .refine(
    // Versions are checked, and their differences told, only for keys the request acts on (and so
    // was authorized for): a version of any other key would read an effect nobody checked access to.
    (input) => {
      const keys = new Set(input.keys);
      return Object.keys(input.seen ?? {}).every((key) => keys.has(key));
    },
    { message: 'seen may name only keys the request asks to bump', path: ['seen'] },
  );

/** Z8: throws StaleDecision when a key the person saw changed since; under a row lock inside a transaction. */
async function checkSeen(db: Parameters<typeof lockSeenEffect>[0], seen: Record<string, SeenEffect> | undefined) {
  for (const [key, version] of Object.entries(seen ?? {})) await lockSeenEffect(db, key, version);
}

export type RequestBumpResult =
  | { mode: 'requested'; requestId: string; setHash: string; count: number; blocked: number; expiresAt: Date }
  | { mode: 'executed'; bumped: number; failed: { key: string; error: string }[]; blocked: number };

export async function requestBump(ctx: BumpContext, raw: unknown): Promise<RequestBumpResult> {
  const input = parseInput(requestBumpInput, raw);
  const { db, actor } = ctx;
  // Z1: asking is its own permission; whoever holds it is a party of the bump row (E2) of the
  // transition table, which reads its human parties from the same permission table.
  if (!may(actor, 'effect.bump.request')) {
    const why = `only ${whoMay('effect.bump.request')} asks for epoch bumps`;
    await auditRefusal(db, {
      chain: 'approvals',
      actor,
      action: 'approval.request',
      subjectType: 'approval',
      subjectId: 'effect.bump',
      reason: input.reason,
      why,
      request: ctx.request,
    });
    throw forbidden(why);
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
  // Every workflow the set touches, kept with it: who may see the request, decided or not, follows
  // from them (Z1). A set within one workflow is filed under its first key's run; one spanning
  // several is filed under no run, so its audit entries too are seen only by all-workflows people.
  const touched = await workflowsOfSubject(
    db,
    'effect',
    items.map((i) => i.key),
  );
  const workflows = touched?.workflows ?? [];
  const runIds =
    workflows.length === 1
      ? await db.effectKey.findMany({
          where: { key: { in: items.slice(0, 1).map((i) => i.key) } },
          select: { runId: true },
        })
      : [];
  const expiresAt = new Date(Date.now() + APPROVAL_TTL_HOURS * 3_600_000);
  const created = await db.$transaction(async (tx) => {
    await checkSeen(tx, input.seen);
    const request = await tx.approvalRequest.create({
      data: {
        kind: 'effect.bump',
        runId: runIds[0]?.runId ?? null,
        payload: { items, workflows },
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
