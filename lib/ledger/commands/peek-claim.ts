// The answer a claim would give without claiming, when that answer is already known to change
// nothing: the key is held at its current epoch (pending, done, unknown, revoked or stuck), so the
// claim would lose and write nothing (S1). The HTTP API uses it to answer a replayed claim from the
// statement that authenticates the caller and stores its Idempotency-Key record (lib/api/held-claim.ts)
// instead of the claim's round trip under a reserved Idempotency-Key.
// Everything a claim checks first (S7, Z6 with its audited refusal, the registered action, the key
// derived on the server: prepareClaim) runs here too, so a refusal is the claim's own refusal.
// "Held" is defined once, in SQL (ledger_claim_peek), where ledger_claim_batch answers its losers.
import { sqlRows, type DbOrTx } from '@/lib/db/client.ts';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import type { Actor, RequestMeta } from '@/lib/core/actor.ts';
import { getRun, getTool } from '../catalog.ts';
import { deriveClaimKey, prepareClaim, requireClaimer, requireClaimScope } from '../prepare-claim.ts';
import { rememberEffectWorkflow } from '../scope.ts';
import { parseInput } from '../validate.ts';
import { claimEffectInput, type ClaimEffectResult } from './claim-effect.ts';

const PEEK_SQL = `
  SELECT epoch, state, changed_by, changed_at FROM ledger_claim_peek($1::text[])`;

/** A held key's current row, as ledger_claim_peek gives it. */
export interface HeldRow {
  epoch: number;
  state: EffectState;
  changed_by: string;
  changed_at: Date;
}

type HeldAnswer = Extract<ClaimEffectResult, { claimed: false }>;
type ClaimCtx = { db: DbOrTx; actor: Actor; request?: RequestMeta };

/** The losing claim's answer when the key is held; null when a claim could win (or its key is new). */
export async function peekClaim(ctx: ClaimCtx, rawInput: unknown): Promise<HeldAnswer | null> {
  const input = parseInput(claimEffectInput, rawInput);
  const call = await prepareClaim(ctx, input);
  return heldAnswer(call.key, call.target, await peekRow(ctx.db, call.key));
}

/** A claim's peek prepared without a caller, for the agent API's replayed claim (lib/api/held-claim.ts),
 *  whose one statement reads the key's held row together with the caller's runtime key. */
export interface ClaimPeekStart {
  /** The claim key, derived on the server (K1-K3). */
  key: string;
  /** The run's workflow: the caller's runtime key must be scoped to it (Z6). */
  workflow: string;
  /** Makes the claim's checks that depend on the caller (S7, Z6, refusals audited), then answers
   *  from the key's held row: null when the key is not held (the claim may win). */
  finish(ctx: ClaimCtx, row: HeldRow | undefined): Promise<HeldAnswer | null>;
}

/**
 * peekClaim in two steps, so that its read can be made together with authenticating the caller: the
 * first step needs no actor (the input, the catalog, the derived key); the second takes the
 * authenticated actor and the row read, makes the claim's checks that depend on the actor and only
 * then gives the answer. Nothing read is returned before those checks pass.
 */
export async function startClaimPeek(db: DbOrTx, rawInput: unknown): Promise<ClaimPeekStart> {
  const input = parseInput(claimEffectInput, rawInput);
  const [tool, run] = await Promise.all([getTool(db, input.tool), getRun(db, input.runId)]);
  const { key, target } = deriveClaimKey(input, tool, run);
  return {
    key,
    workflow: run.workflow,
    finish: async (ctx, row) => {
      await requireClaimer(ctx, run.id);
      await requireClaimScope(ctx, run);
      rememberEffectWorkflow(key, run.workflow);
      return heldAnswer(key, target, row);
    },
  };
}

async function peekRow(db: DbOrTx, key: string): Promise<HeldRow | undefined> {
  return (await sqlRows<HeldRow>(db, PEEK_SQL, [[key]], 'ledger_claim_peek'))[0];
}

function heldAnswer(key: string, target: string, row: HeldRow | undefined): HeldAnswer | null {
  if (!row) return null;
  return {
    claimed: false,
    key,
    epoch: row.epoch,
    state: row.state,
    changedBy: row.changed_by,
    changedAt: row.changed_at,
    target,
  };
}
