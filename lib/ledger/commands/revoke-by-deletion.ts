// V1, V2: the runtime reports that it deleted what an effect produced, through our own API. The
// key is revoked by the same ledger_transition call that records the deletion as its evidence (one
// transaction), and the redo lands on a deterministic successor id: UUIDv5 of the deleted id and
// the deletion time. Deleting a successor later walks the chain (its successor derives from it).
// Reporting the same deletion again returns the successor recorded the first time.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, type CommandContext } from './common.ts';
import { requireEffectScope } from '../scope.ts';
import { transitionEffect } from './transition-effect.ts';
import { epochField, offsetDatetimeField, optionalReasonField } from '../fields.ts';
import { conflict, LedgerError } from '../errors.ts';
import { auditRefusal } from '@/lib/audit/append.ts';

/** Namespace of successor ids (a fixed random UUID: changing it would change every successor). */
export const SUCCESSOR_NAMESPACE = '6f1c0a52-4a5e-4d0b-9a61-3c7e2b8f9d14';

export const revokeByDeletionInput = z.strictObject({
  ...effectRef,
  /** The epoch that produced the deleted object (the claim's). Required: after an operator's bump the
   *  key's current epoch is a new one, and revoking it would block the redo the bump was for while
   *  the epoch that made the object stayed done. */
  epoch: epochField,
  /** The id of the object the effect produced and that was deleted. */
  objectId: z.string().trim().min(1).max(256),
  /** When it was deleted (ISO 8601). Omitted: now. Part of the successor id. */
  deletedAt: offsetDatetimeField.optional(),
  reason: optionalReasonField,
});

/** RFC 4122 version 5 (SHA-1, name based). */
export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The id the redo after deleting `objectId` at `deletedAt` must use (V2). */
export function successorId(objectId: string, deletedAt: string | Date): string {
  const at = new Date(deletedAt).toISOString();
  return uuidV5(`${objectId}\n${at}`, SUCCESSOR_NAMESPACE);
}

export interface DeletionResult {
  key: string;
  epoch: number;
  state: 'revoked';
  objectId: string;
  deletedAt: string;
  successorId: string;
  changedBy: string;
  changedAt: Date;
}

export async function revokeByDeletion(ctx: CommandContext, raw: unknown): Promise<DeletionResult> {
  const input = parseInput(revokeByDeletionInput, raw);
  // Z6 before anything about the key is read: a key of another workflow reveals nothing.
  await requireEffectScope(ctx, input.key, { action: 'effect.revoke_deletion', subjectType: 'effect' });
  const earlier = await earlierReport(ctx, input);
  if (earlier) return earlier;
  // An epoch still waiting for its claim (a bump's new epoch) produced nothing that could be deleted.
  const [row] = await ctx.db.$queryRaw<{ awaiting: boolean; run_id: string }[]>`
    SELECT awaiting_claim AS awaiting, run_id::text AS run_id FROM effect WHERE key = ${input.key} AND epoch = ${input.epoch}`;
  if (row?.awaiting) {
    const why = `epoch ${input.epoch} of this key was never claimed: nothing it produced can have been deleted`;
    // A4: refused, on the key's refused chain (auditRefusal files it there), as ledger_transition's are.
    await auditRefusal(ctx.db, {
      chain: `effect:${input.key}`,
      actor: ctx.actor,
      action: 'effect.revoke_deletion',
      subjectType: 'effect',
      subjectId: input.key,
      runId: row.run_id,
      before: 'pending',
      after: 'revoked',
      why,
      detail: { epoch: input.epoch, objectId: input.objectId },
      request: ctx.request,
    });
    throw conflict(why, { field: 'epoch' });
  }
  const deletedAt = new Date(input.deletedAt ?? Date.now()).toISOString();
  const successor = successorId(input.objectId, deletedAt);
  let result;
  try {
    result = await transitionEffect(ctx, {
      key: input.key,
      epoch: input.epoch,
      to: 'revoked',
      action: 'effect.revoke_deletion',
      reason: input.reason || `deleted ${input.objectId} through the product's API`,
      evidence: { deletion: { objectId: input.objectId, deletedAt, successorId: successor } },
    });
  } catch (error) {
    // The same report sent twice at once: the one that lost the row lock finds the key revoked by
    // the other, and answers what it recorded (V2: one successor), not a refusal.
    const same = error instanceof LedgerError ? await earlierReport(ctx, input) : null;
    if (same) return same;
    throw error;
  }
  return {
    key: result.key,
    epoch: result.epoch,
    state: 'revoked',
    objectId: input.objectId,
    deletedAt,
    successorId: successor,
    changedBy: result.changedBy,
    changedAt: result.changedAt,
  };
}

/** The report of this deletion already recorded on the key at that epoch, if any (V2). */
async function earlierReport(
  ctx: CommandContext,
  input: z.infer<typeof revokeByDeletionInput>,
): Promise<DeletionResult | null> {
  const [p] = await ctx.db.$queryRaw<
    {
      epoch: number;
      evidence: { deletion: { objectId: string; deletedAt: string; successorId: string } };
      at: Date;
    }[]
  >`
    SELECT t.epoch, t.evidence, t.at FROM effect_transition t
     WHERE t.key = ${input.key} AND t.to_state = 'revoked' AND t.evidence->'deletion'->>'objectId' = ${input.objectId}
       AND t.epoch = ${input.epoch}::int
     ORDER BY t.id DESC LIMIT 1`;
  if (!p) return null;
  const d = p.evidence.deletion;
  return {
    key: input.key,
    epoch: p.epoch,
    state: 'revoked',
    objectId: d.objectId,
    deletedAt: d.deletedAt,
    successorId: d.successorId,
    changedBy: ctx.actor.label,
    changedAt: p.at,
  };
}
