-- Which of these keys are held at their current epoch (pending, done, unknown, revoked or stuck, and
-- not a pending row awaiting its claim): a claim of such a key loses and writes nothing, so its answer
-- can be given from this read alone. One home for "held": ledger_claim_batch answers its losing
-- claimers from it, and the agent API answers a replayed claim from it in ledger_claim_peek_store,
-- which writes only that request's Idempotency-Key record (lib/api/held-claim.ts). The read is unlocked, like ledger_claim's first look: a key
-- whose claim is still in flight elsewhere is not visible yet, so it is not reported held and its
-- caller goes on to claim it, waiting for that transaction as a lone claim would.
--
-- LIMIT 1 keeps each look-up an index probe per key: a cached generic plan must not turn into a scan
-- of the whole key table.
CREATE OR REPLACE FUNCTION ledger_claim_peek(p_keys text[])
RETURNS TABLE (
  ord integer, epoch integer, state "EffectState", idempotency_key text, changed_by text,
  changed_at timestamptz, effect_id bigint
)
LANGUAGE sql STABLE
AS $$
  SELECT u.o::integer, x.epoch, x.state, x.idempotency_key, x.changed_by, x.changed_at, x.id
    FROM unnest(p_keys) WITH ORDINALITY AS u(key, o)
    CROSS JOIN LATERAL (
      SELECT e.epoch, e.state, e.idempotency_key, e.changed_by, e.changed_at, e.id, e.awaiting_claim
        FROM effect_key k JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
       WHERE k.key = u.key LIMIT 1
    ) x
   WHERE x.state <> 'failed' AND NOT (x.state = 'pending' AND x.awaiting_claim)
$$;
