// The answer a claim would give without claiming, when that answer is already known to change
// nothing: the key is held at its current epoch (pending, done, unknown, revoked or stuck), so the
// claim would lose and write nothing (S1). The HTTP API uses it to answer a replayed claim with one
// read instead of the claim's round trip under a reserved Idempotency-Key (lib/api/handler.ts).
// Everything a claim checks first (S7, Z6 with its audited refusal, the registered action, the key
// derived on the server: prepareClaim) runs here too, so a refusal is the claim's own refusal.
// "Held" is defined once, in SQL (ledger_claim_peek), where ledger_claim_batch answers its losers.
import { sqlRows, type DbOrTx } from '@/lib/db/client.ts';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import type { Actor, RequestMeta } from '../actor.ts';
import { prepareClaim } from '../prepare-claim.ts';
import { parseInput } from '../validate.ts';
import { claimEffectInput, type ClaimEffectResult } from './claim-effect.ts';

const PEEK_SQL = `
  SELECT epoch, state, changed_by, changed_at FROM ledger_claim_peek(ARRAY[$1::text])`;

interface PeekRow {
  epoch: number;
  state: EffectState;
  changed_by: string;
  changed_at: Date;
}

/** The losing claim's answer when the key is held; null when a claim could win (or its key is new). */
export async function peekClaim(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  rawInput: unknown,
): Promise<Extract<ClaimEffectResult, { claimed: false }> | null> {
  const input = parseInput(claimEffectInput, rawInput);
  const call = await prepareClaim(ctx, input);
  const [row] = await sqlRows<PeekRow>(ctx.db, PEEK_SQL, [call.key], 'ledger_claim_peek');
  if (!row) return null;
  return {
    claimed: false,
    key: call.key,
    epoch: row.epoch,
    state: row.state,
    changedBy: row.changed_by,
    changedAt: row.changed_at,
    target: call.target,
  };
}
