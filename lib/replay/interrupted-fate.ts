// An item this replay claimed whose handler died before recording what the provider answered (its
// worker was killed between the send and the report). Left alone, the key waits for its lease, the
// reconciler finds no receipt, and after the settle window support must decide (S4). Before that, the
// handler that runs the chunk again asks the provider, in the ways the provider declares
// (lib/sdk/provider.ts), in this order:
//   1. lookup by the idempotency key: a message delivered or accepted completes the key (S2);
//   2. the receipt the provider derives from the key, looked up: the same;
//   3. inside the provider's idempotency window, a re-send with the same key: the provider answers
//      with the original message if the lost call reached it, or sends now if it did not, so the
//      target gets exactly one message either way (R2), and the answer settles the key as usual.
// A lookup miss alone decides nothing (the lost call may still be on its way to the provider), and a
// provider error leaves the item interrupted for the reconciler (C1-C3), as before.
import { sqlRows } from '../db/client.ts';
import type { RegisteredProvider } from '../providers/registry.ts';
import type { LookupResult } from '../providers/types.ts';
import type { ItemContext } from './executor.ts';
import type { ItemRow } from './item-window.ts';
import { settle, type SentItem } from './settle-verdict.ts';

const LOOKUP_TIMEOUT_MS = 10_000;

interface HeldClaim {
  epoch: number;
  idempotency_key: string;
  attempt_id: string;
  claimed_at: Date;
  now: Date;
}

/** The claim of `key` this replay's executor holds: pending, not awaiting a claim, its newest claim ours. */
async function heldClaim(c: ItemContext, key: string): Promise<HeldClaim | undefined> {
  const [row] = await sqlRows<HeldClaim>(
    c.deps.db,
    `SELECT e.epoch, e.idempotency_key, a.id::text AS attempt_id, a.started_at AS claimed_at, now() AS now
       FROM effect_key k
       JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
       JOIN LATERAL (
         SELECT t.attempt_id, t.actor_id FROM effect_transition t
          WHERE t.key = e.key AND t.epoch = e.epoch AND t.to_state = 'pending' AND t.attempt_id IS NOT NULL
          ORDER BY t.id DESC LIMIT 1) t ON t.actor_id = $2
       JOIN attempt a ON a.id = t.attempt_id
      WHERE k.key = $1 AND e.state = 'pending' AND NOT e.awaiting_claim`,
    [key, c.actor.id],
  );
  return row;
}

const delivered = (r: LookupResult | null): r is LookupResult & { found: true } =>
  !!r && r.found && (r.state === 'delivered' || r.state === 'accepted');

/** True when the item's outcome was recorded (or its chunk is to be retried); false leaves it interrupted. */
export async function learnInterruptedFate(
  c: ItemContext,
  item: ItemRow,
  provider: RegisteredProvider,
  /** The send of the item on this claim, its answer settled (send-item.ts). */
  resend: (claim: SentItem & { idempotencyKey: string }) => Promise<void>,
): Promise<boolean> {
  const byKey = provider.lookupByIdempotencyKey?.bind(provider);
  const hint = provider.receiptHint?.bind(provider);
  const window = provider.idempotencyWindowSeconds;
  if (!byKey && !(hint && provider.supportsReceiptLookup) && window === undefined) return false;
  const held = await heldClaim(c, item.key);
  if (!held) return false;
  const sent: SentItem = { itemId: item.id, key: item.key, epoch: held.epoch, attemptId: held.attempt_id };
  const ask = (how: string, look: () => Promise<LookupResult>) =>
    look().then(
      (r) => ({ how, r }),
      () => ({ how, r: null }), // C3: a provider error tells nothing
    );

  const answers = [];
  if (byKey) answers.push(await ask('idempotency key', () => byKey(held.idempotency_key, timeout())));
  if (!answers.some((a) => delivered(a.r)) && hint && provider.supportsReceiptLookup)
    answers.push(
      await ask('receipt derived from the key', () => provider.lookup(hint(held.idempotency_key), timeout())),
    );
  const found = answers.find((a) => delivered(a.r));
  if (found && delivered(found.r)) {
    await settle(
      c,
      sent,
      {
        to: 'done',
        receipt: found.r.receipt,
        evidence: {
          interrupted: `receipt found by ${found.how}`,
          state: found.r.state,
          lookupStatus: found.r.raw.status,
        },
      },
      { outcome: 'sent', note: `interrupted send: receipt ${found.r.receipt} found by ${found.how}` },
    );
    return true;
  }
  // A message the provider holds in another state (failed, awaiting completion) is the reconciler's to
  // judge after the lease, with its evidence; re-sending would only be answered with that message.
  if (answers.some((a) => a.r?.found)) return false;
  const age = (held.now.getTime() - new Date(held.claimed_at).getTime()) / 1000;
  if (window === undefined || age >= window || !provider.supportsIdempotencyKey) return false;
  await resend({ ...sent, idempotencyKey: held.idempotency_key });
  return true;
}

const timeout = () => AbortSignal.timeout(LOOKUP_TIMEOUT_MS);
