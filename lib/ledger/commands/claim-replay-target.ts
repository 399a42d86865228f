// The replay executor's claim of one frozen target (F3): the runtime's claim (the same checks and key
// derivation, ../prepare-claim.ts, and the same ledger_claim committing pending before the provider
// call, S1), with two conditions of a forced replay:
//  - it runs only while the replay is running, checked in the claim's own statement (a lateral call
//    on the replay row, made only while the row says 'running'): a pause or cancel stops every
//    handler before its next claim, with no extra query (F5);
//  - the key derived now must be the key frozen in the replay's item when the operator confirmed it
//    (K2, F4): otherwise nothing is claimed;
//  - the target must still be in the state the executor read it in (its fingerprint), compared under
//    the claim's own locks (ledger_claim_frozen): a target moved by someone else while the handler
//    waited for the provider's rate limit is not claimed (F4).
import { sqlRows } from '@/lib/db/client.ts';
import { claimParams, type ClaimCall, type ClaimRow } from '../claim-batcher.ts';
import { LedgerError } from '../errors.ts';
import { prepareClaim, type ClaimIntent } from '../prepare-claim.ts';
import { claimResult, type ClaimEffectResult } from './claim-effect.ts';
import type { CommandContext } from './common.ts';
import { traced } from '@/lib/ops/tracing.ts';

/** A frozen plan item's values, parsed when the plan was submitted, so not parsed again for every
 *  item the executor claims (as transitionEffect, an internal command, takes its request typed). */
export interface ClaimReplayTargetInput extends ClaimIntent {
  replayId: string;
  /** The key frozen in the replay's item. */
  frozenKey: string;
  /** The target's fingerprint (lib/replay/set.ts) the executor decided to send on. */
  expectedFingerprint: string;
}

export type ClaimReplayTargetResult =
  /** The replay is not running (paused, cancelled, gone): nothing claimed. */
  | { outcome: 'stopped' }
  /** The plan's action is no longer registered for the tool: nothing claimed. */
  | { outcome: 'action_unregistered' }
  /** The key derived now differs from the frozen one: nothing claimed. */
  | { outcome: 'key_changed'; key: string }
  /** The target is no longer in the state the executor read: nothing claimed. */
  | { outcome: 'moved'; now: string; changedBy: string | null }
  | { outcome: 'answered'; claim: ClaimEffectResult };

// ledger_claim's parameters (claimParams), then the expected fingerprint.
const CLAIM_FROZEN_CALL =
  'ledger_claim_frozen($1, $2, $3, $4, $5, $6::"TargetType", $7, $8::uuid, $9::"ActorKind", $10, $11, $12::int, $13::jsonb, $14)';

// The call sits in the select list of the query that reads the replay's row, so it runs only for a
// row that passed the status condition (a set-returning function in a select list is evaluated per
// row after WHERE); in FROM, joined to the replay, whether it ran first would be up to the planner's
// join order. OFFSET 0 keeps the subquery whole, so the outer column references call it once.
const CLAIM_WHILE_RUNNING_SQL = `
  SELECT (c.x).claimed, (c.x).epoch, (c.x).state, (c.x).attempt_id, (c.x).idempotency_key, (c.x).changed_by,
         (c.x).changed_at, (c.x).moved_to
    FROM (SELECT ${CLAIM_FROZEN_CALL} AS x FROM replay r WHERE r.id = $15::uuid AND r.status = 'running' OFFSET 0) c`;

export function claimReplayTarget(
  ctx: CommandContext,
  input: ClaimReplayTargetInput,
): Promise<ClaimReplayTargetResult> {
  const attributes = {
    'ledger.key': input.frozenKey,
    'ledger.replay_id': input.replayId,
    'ledger.actor': ctx.actor.kind,
  };
  return traced('ledger.claim_replay_target', attributes, async (span) => {
    const result = await claimReplayTargetUntraced(ctx, input);
    span?.setAttribute('ledger.outcome', result.outcome);
    if (result.outcome === 'answered')
      span?.setAttributes({ 'ledger.epoch': result.claim.epoch, 'ledger.claimed': result.claim.claimed });
    return result;
  });
}

async function claimReplayTargetUntraced(
  ctx: CommandContext,
  input: ClaimReplayTargetInput,
): Promise<ClaimReplayTargetResult> {
  let call: ClaimCall;
  try {
    call = await prepareClaim(ctx, input);
  } catch (error) {
    if (error instanceof LedgerError && error.code === 'validation' && error.details.field === 'action')
      return { outcome: 'action_unregistered' };
    throw error;
  }
  if (call.key !== input.frozenKey) return { outcome: 'key_changed', key: call.key };
  // One claim per statement and commit (docs/REPLAY.md, "Known limits", says why a replay's claims
  // are not grouped).
  const [row] = await sqlRows<ClaimRow & { moved_to: string | null }>(
    ctx.db,
    CLAIM_WHILE_RUNNING_SQL,
    [...claimParams(call), input.expectedFingerprint, input.replayId],
    'ledger_claim_frozen_while_replay_running',
  );
  if (!row) return { outcome: 'stopped' };
  if (row.moved_to !== null) return { outcome: 'moved', now: row.moved_to, changedBy: row.changed_by };
  return { outcome: 'answered', claim: claimResult(call, row) };
}
