-- Claim (S1, S3, E1): one round trip, one transaction, no lock held across a provider call.
-- Of any number of concurrent claimers exactly one wins: the INSERT ... ON CONFLICT DO NOTHING on
-- (key, epoch) for a new epoch, or the conditional UPDATE of a failed / awaiting-claim row (the row
-- lock makes every other updater re-check the state and find it taken). Losers get the current
-- state and write nothing. Callers (lib/ledger/commands/claim.ts) derive the key and authorize.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_claim(
  p_key text, p_tool text, p_action text, p_record_id text, p_target text, p_target_type "TargetType",
  p_trigger_id text, p_run_id uuid, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text,
  p_lease_seconds integer, p_request jsonb
) RETURNS TABLE (
  claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint
)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_epoch integer;
  v_effect bigint;
  v_from "EffectState";
  v_awaiting boolean;
  v_attempt uuid;
  v_idem text;
BEGIN
  INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                               current_epoch, state, changed_by, changed_at, created_at)
  VALUES (p_key, p_tool, p_action, p_record_id, p_target, p_target_type, p_trigger_id, p_run_id,
          1, 'pending', p_actor_label, now(), now())
  ON CONFLICT (key) DO NOTHING
  RETURNING k.current_epoch INTO v_epoch;
  IF v_epoch IS NULL THEN
    SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  END IF;
  v_idem := ledger_idempotency_key(p_key, v_epoch);

  INSERT INTO effect AS e (key, epoch, state, run_id, idempotency_key, lease_expires_at,
                           changed_by_kind, changed_by, changed_at, created_at)
  VALUES (p_key, v_epoch, 'pending', p_run_id, v_idem, now() + make_interval(secs => p_lease_seconds),
          p_actor_kind, p_actor_label, now(), now())
  ON CONFLICT (key, epoch) DO NOTHING
  RETURNING e.id INTO v_effect;

  IF v_effect IS NULL THEN
    -- The epoch exists. Only a failed row (S3) or a pending row awaiting its claim can be taken;
    -- the unlocked read lets the common case (held pending, done, ...) skip without queueing on
    -- the row lock, and the locked re-read makes exactly one concurrent taker win.
    SELECT e.state, e.awaiting_claim INTO v_from, v_awaiting FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch;
    IF v_from = 'failed' OR (v_from = 'pending' AND v_awaiting) THEN
      SELECT e.id, e.state, e.awaiting_claim INTO v_effect, v_from, v_awaiting
        FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
      IF v_from = 'failed' OR (v_from = 'pending' AND v_awaiting) THEN
        UPDATE effect e
           SET state = 'pending', awaiting_claim = false, run_id = p_run_id,
               lease_expires_at = now() + make_interval(secs => p_lease_seconds),
               changed_by_kind = p_actor_kind, changed_by = p_actor_label, changed_at = now()
         WHERE e.id = v_effect;
      ELSE
        v_effect := NULL;
      END IF;
    END IF;
    IF v_effect IS NULL THEN
      RETURN QUERY
        SELECT false, e.epoch, e.state, NULL::uuid, e.idempotency_key, e.changed_by, e.changed_at, e.id
          FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch;
      RETURN;
    END IF;
  END IF;

  v_attempt := gen_random_uuid();
  IF v_from IS NOT NULL THEN
    -- A re-claim: the head already exists and shows the old state.
    UPDATE effect_key k SET state = 'pending', changed_by = p_actor_label, changed_at = now()
     WHERE k.key = p_key AND k.current_epoch = v_epoch;
  END IF;

  -- Attempt, transition and audit entry in one statement (fewer executor round trips per claim).
  WITH new_attempt AS (
    INSERT INTO attempt (id, effect_id, key, epoch, run_id, started_at)
    VALUES (v_attempt, v_effect, p_key, v_epoch, p_run_id, now())
  ), new_transition AS (
    INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, attempt_id, at)
    VALUES (v_effect, p_key, v_epoch, v_from, 'pending', p_actor_kind, p_actor_id, v_attempt, now())
  )
  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action,
                           subject_type, subject_id, run_id, before_state, after_state, outcome, detail,
                           ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, 'effect.claim',
          'effect', p_key, p_run_id, v_from::text, 'pending', 'ok',
          jsonb_build_object('epoch', v_epoch, 'attemptId', v_attempt),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, v_epoch, 'pending'::"EffectState", v_attempt, v_idem, p_actor_label, now(), v_effect;
END
$$;
