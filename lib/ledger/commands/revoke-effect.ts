// -> revoked, only by an explicit action (S5): an operator with a reason, or a deletion through
// the product's own API (V1, recorded by the runtime in the same transaction as the deletion).
// Absence is never revocation: nothing here is ever called because a lookup came back empty.
// An operator may also revoke a planned target nobody has claimed yet: its key is taken from the
// approved plan row and created revoked (ledger_revoke_planned), so no replay or runtime sends to it.
import { z } from 'zod';
import { sqlRows } from '@/lib/db/client.ts';
import { actorRole, partyOf, requestJson } from '@/lib/core/actor.ts';
import { LedgerError, notFound } from '../errors.ts';
import { reasonField } from '../fields.ts';
import { requireWorkflowScope } from '../scope.ts';
import { checkTransition } from '../transitions.ts';
import { parseInput } from '../validate.ts';
import { decideOnSeenEffect, lockSeenEffect, seenEffectField, type SeenEffect } from '../seen.ts';
import { effectRef, type CommandContext } from './common.ts';
import { transitionEffect, type TransitionResult } from './transition-effect.ts';

export const revokeEffectInput = z.strictObject({
  ...effectRef,
  reason: reasonField,
  /** Z8: the version the person was shown; a change since then refuses the revocation. */
  seen: seenEffectField.optional(),
});

const PLANNED_SQL = `
  SELECT ok, "exists", epoch, run_id, changed_at, problem
    FROM ledger_revoke_planned($1, $2::"ActorKind", $3, $4, $5, $6, $7::jsonb)`;

/** A revocation's result; `from` is null for a planned target that had no state yet. */
export type RevokeResult = Omit<TransitionResult, 'from'> & { from: TransitionResult['from'] | null };

export async function revokeEffect(ctx: CommandContext, raw: unknown): Promise<RevokeResult> {
  const input = parseInput(revokeEffectInput, raw);
  return decideOnSeenEffect(ctx.db, input.key, input.seen, (db) => revokeAsSeen({ ...ctx, db }, input));
}

async function revokeAsSeen(ctx: CommandContext, input: z.output<typeof revokeEffectInput>): Promise<RevokeResult> {
  const epoch = input.epoch ?? input.seen?.epoch;
  const revoke = () =>
    transitionEffect(ctx, {
      key: input.key,
      epoch,
      to: 'revoked',
      action: 'effect.revoke',
      reason: input.reason,
    });
  try {
    return await revoke();
  } catch (error) {
    // No effect yet: a planned target that was never claimed (epoch 1 only).
    if (!(error instanceof LedgerError) || error.code !== 'not_found' || (epoch ?? 1) !== 1) throw error;
    return revokePlanned(ctx, input.key, input.reason, revoke, input.seen);
  }
}

async function revokePlanned(
  ctx: CommandContext,
  key: string,
  reason: string,
  revokeExisting: () => Promise<TransitionResult>,
  seen?: SeenEffect,
): Promise<RevokeResult> {
  const { actor } = ctx;
  const permitted = checkTransition('none', 'revoked', partyOf(actor));
  if (!permitted.allowed) throw notFound(`no effect ${key}`, { field: 'key' });
  const [planned] = await sqlRows<{ workflow: string; run_id: string }>(
    ctx.db,
    `SELECT r.workflow, r.id::text AS run_id FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
       JOIN run r ON r.id = pi.run_id WHERE pi.key = $1 ORDER BY pi.id LIMIT 1`,
    [key],
  );
  if (!planned) throw notFound(`no effect ${key}, and it is not a target of an approved plan`, { field: 'key' });
  await requireWorkflowScope(ctx, planned.workflow, {
    action: 'effect.revoke',
    subjectType: 'effect',
    subjectId: key,
    runId: planned.run_id,
    reason,
  });
  const [row] = await sqlRows<{
    ok: boolean;
    exists: boolean;
    epoch: number | null;
    run_id: string | null;
    changed_at: Date | null;
    problem: string | null;
  }>(ctx.db, PLANNED_SQL, [
    key,
    actor.kind,
    actor.id,
    actor.label,
    actorRole(actor),
    reason,
    JSON.stringify(requestJson(ctx.request)),
  ]);
  // A claim created the key between the two statements: revoke it like any other, unless the person
  // decided on the unclaimed target (Z8: then it is stale, and lockSeenEffect says so).
  if (row?.exists) {
    if (seen) await lockSeenEffect(ctx.db, key, seen);
    return revokeExisting();
  }
  if (!row?.ok) throw notFound(`no effect ${key}, and it is not a target of an approved plan`, { field: 'key' });
  return {
    key,
    epoch: row.epoch!,
    from: null,
    state: 'revoked',
    changedBy: actor.label,
    changedAt: row.changed_at!,
    receipt: null,
    runId: row.run_id!,
  };
}
