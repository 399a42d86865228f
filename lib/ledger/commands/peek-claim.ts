// The answer a claim would give without claiming, when that answer is already known to change
// nothing: the key is held at its current epoch (pending, done, unknown, revoked or stuck), so the
// claim would lose and write nothing (S1). The HTTP API uses it to answer a replayed claim with one
// read instead of the claim's round trip under a reserved Idempotency-Key (lib/api/handler.ts).
// Everything a claim checks first (S7, Z6 with its audited refusal, the registered action, the key
// derived on the server: prepareClaim) runs here too, so a refusal is the claim's own refusal.
// "Held" is defined once, in SQL (ledger_claim_peek), where ledger_claim_batch answers its losers.
import type pg from 'pg';
import { sqlPool, sqlRows, type DbOrTx } from '@/lib/db/client.ts';
import { GroupCommit } from '@/lib/db/group-commit.ts';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import type { Actor, RequestMeta } from '../actor.ts';
import { MAX_BATCH } from '../claim-batcher.ts';
import { prepareClaim } from '../prepare-claim.ts';
import { parseInput } from '../validate.ts';
import { claimEffectInput, type ClaimEffectResult } from './claim-effect.ts';

const PEEK_SQL = `
  SELECT ord, epoch, state, changed_by, changed_at FROM ledger_claim_peek($1::text[])`;

interface PeekRow {
  ord: number;
  epoch: number;
  state: EffectState;
  changed_by: string;
  changed_at: Date;
}

/** Each key's row in key order; undefined where the key is not held. */
async function peekKeys(pool: pg.Pool, keys: string[]): Promise<(PeekRow | undefined)[]> {
  const { rows } = await pool.query<PeekRow>({ name: 'ledger_claim_peek', text: PEEK_SQL, values: [keys] });
  const answers: (PeekRow | undefined)[] = keys.map(() => undefined);
  for (const row of rows) answers[row.ord - 1] = row;
  return answers;
}

// Peeks made at the same moment share one statement (one round trip, one index probe per key), with
// the claim batcher's pacing (lib/db/group-commit.ts): a lone peek goes out at once.
const batchers = new WeakMap<pg.Pool, GroupCommit<string, PeekRow | undefined>>();

function peekBatcher(pool: pg.Pool): GroupCommit<string, PeekRow | undefined> {
  let batcher = batchers.get(pool);
  if (!batcher) {
    batcher = new GroupCommit<string, PeekRow | undefined>({
      maxInFlight: Math.max(1, Math.floor((pool.options.max ?? 10) / 4)),
      maxBatch: MAX_BATCH,
      minBatch: 4,
      runOne: async (key) => (await peekKeys(pool, [key]))[0],
      runBatch: (keys) => peekKeys(pool, keys),
    });
    batchers.set(pool, batcher);
  }
  return batcher;
}

/** The losing claim's answer when the key is held; null when a claim could win (or its key is new). */
export async function peekClaim(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  rawInput: unknown,
): Promise<Extract<ClaimEffectResult, { claimed: false }> | null> {
  const input = parseInput(claimEffectInput, rawInput);
  const call = await prepareClaim(ctx, input);
  const pool = sqlPool(ctx.db);
  const row = pool
    ? await peekBatcher(pool).submit(call.key)
    : (await sqlRows<PeekRow>(ctx.db, PEEK_SQL, [[call.key]], 'ledger_claim_peek'))[0];
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
