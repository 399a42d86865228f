// Claim (S1, S3): derive the key on the server from the registered tool definition, then one call
// to ledger_claim, which commits the pending row before any provider call. Losers skip.
// Claims made at the same moment share one commit (../claim-batcher.ts).
import { z } from 'zod';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { sqlPool, type DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '@/lib/core/actor.ts';
import { CLAIM_SQL, claimBatcher, claimParams, type ClaimCall, type ClaimRow } from '../claim-batcher.ts';
import { prepareClaim } from '../prepare-claim.ts';
import { traced } from '@/lib/ops/tracing.ts';
import { parseInput } from '../validate.ts';

export const claimEffectInput = z.strictObject({
  runId: z.uuid(),
  tool: z.string().min(1).max(128),
  action: z.string().min(1).max(128),
  recordId: z.string().min(1).max(256),
  target: z.string().min(1).max(2048),
});
export type ClaimEffectInput = z.input<typeof claimEffectInput>;

/** The answer stored with the caller's Idempotency-Key record in the claim's transaction (Z5). */
type StoredAnswer = { answer?: { status: number; body: unknown } };

export type ClaimEffectResult = StoredAnswer &
  (
    | { claimed: true; key: string; epoch: number; attemptId: string; idempotencyKey: string; target: string }
    | {
        claimed: false;
        key: string;
        epoch: number;
        state: EffectState;
        changedBy: string;
        changedAt: Date;
        target: string;
      }
  );

export function claimEffect(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta; answerRecord?: string },
  rawInput: unknown,
): Promise<ClaimEffectResult> {
  const attributes = { 'ledger.actor': ctx.actor.kind, 'ledger.request_id': ctx.request?.requestId ?? '' };
  return traced('ledger.claim', attributes, async (span) => {
    const result = await claimEffectUntraced(ctx, rawInput);
    span?.setAttributes({ 'ledger.key': result.key, 'ledger.epoch': result.epoch, 'ledger.claimed': result.claimed });
    return result;
  });
}

async function claimEffectUntraced(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta; answerRecord?: string },
  rawInput: unknown,
): Promise<ClaimEffectResult> {
  const input = parseInput(claimEffectInput, rawInput);
  const { db } = ctx;
  const call = { ...(await prepareClaim(ctx, input)), answerRecord: ctx.answerRecord ?? null };
  // On the root client, concurrent claims share a commit (claim-batcher.ts); inside a caller's
  // transaction the claim is part of that transaction and commits with it.
  const pool = sqlPool(db);
  const row = pool
    ? await claimBatcher(pool).claim(call)
    : (await db.$queryRawUnsafe<ClaimRow[]>(CLAIM_SQL, ...claimParams(call)))[0]!;
  return claimResult(call, row);
}

/** The claimer's answer from ledger_claim's row: the attempt to use, or who holds the key. */
export function claimResult(call: ClaimCall, row: ClaimRow): ClaimEffectResult {
  const stored: StoredAnswer =
    row.answer_status != null ? { answer: { status: row.answer_status, body: row.answer_body } } : {};
  if (row.claimed) {
    return {
      claimed: true,
      key: call.key,
      epoch: row.epoch,
      attemptId: row.attempt_id!,
      idempotencyKey: row.idempotency_key,
      target: call.target,
      ...stored,
    };
  }
  return {
    claimed: false,
    key: call.key,
    epoch: row.epoch,
    state: row.state,
    changedBy: row.changed_by,
    changedAt: row.changed_at,
    target: call.target,
    ...stored,
  };
}
