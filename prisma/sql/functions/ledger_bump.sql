-- Epoch bump (E1-E3): only done, revoked or stuck can be superseded; pending and unknown block it.
-- The head row lock serializes bumps; the new epoch starts pending and awaiting its claim, and
-- since the old epoch's row already exists, no racing claim can ever win on the old epoch.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_bump(
  p_key text, p_expected_epoch integer,
  p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_reason text, p_detail jsonb, p_request jsonb
) RETURNS TABLE (ok boolean, epoch integer, from_state "EffectState", state "EffectState", problem text)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_head effect_key%ROWTYPE;
  v_row effect%ROWTYPE;
  v_problem text;
  v_new bigint;
  v_epoch integer;
BEGIN
  -- Lock order: the effect row, then the key head, as ledger_claim and ledger_transition do
  -- (head first here deadlocked against a revoke or a re-claim of the same epoch). The epoch is
  -- read unlocked, then re-checked under both locks: a bump that won meanwhile makes this stale.
  SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
  SELECT * INTO v_head FROM effect_key k WHERE k.key = p_key FOR UPDATE;

  IF v_head.current_epoch <> v_epoch THEN
    SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_head.current_epoch;
    v_problem := 'stale epoch: the key is at epoch ' || v_head.current_epoch;
  ELSIF p_expected_epoch IS NOT NULL AND p_expected_epoch <> v_head.current_epoch THEN
    v_problem := 'stale epoch: the key is at epoch ' || v_head.current_epoch;
  ELSIF v_row.state NOT IN ('done', 'revoked', 'stuck') THEN
    v_problem := 'only done, revoked or stuck can be superseded; this epoch is ' || v_row.state;
  END IF;

  IF v_problem IS NOT NULL THEN
    INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                             action, subject_type, subject_id, run_id, before_state, after_state, reason,
                             outcome, detail, ip, user_agent, request_id)
    VALUES ('refused:effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
            'effect.bump', 'effect', p_key, v_row.run_id, v_row.state::text, NULL, p_reason, 'refused',
            jsonb_build_object('epoch', v_head.current_epoch, 'why', v_problem) || coalesce(p_detail, '{}'::jsonb),
            p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');
    RETURN QUERY SELECT false, v_head.current_epoch, v_row.state, v_row.state, v_problem;
    RETURN;
  END IF;

  INSERT INTO effect (key, epoch, state, run_id, idempotency_key, lease_expires_at, awaiting_claim,
                      changed_by_kind, changed_by, changed_at, created_at)
  VALUES (p_key, v_head.current_epoch + 1, 'pending', v_row.run_id,
          ledger_idempotency_key(p_key, v_head.current_epoch + 1), NULL, true,
          p_actor_kind, p_actor_label, now(), now())
  RETURNING id INTO v_new;

  UPDATE effect_key k SET current_epoch = v_head.current_epoch + 1, state = 'pending',
         changed_by = p_actor_label, changed_at = now()
   WHERE k.key = p_key;

  INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, reason, evidence, at)
  VALUES (v_new, p_key, v_head.current_epoch + 1, NULL, 'pending', p_actor_kind, p_actor_id, p_reason,
          jsonb_build_object('supersedes', v_head.current_epoch, 'previousState', v_row.state) || coalesce(p_detail, '{}'::jsonb), now());

  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                           action, subject_type, subject_id, run_id, before_state, after_state, reason,
                           outcome, detail, ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
          'effect.bump', 'effect', p_key, v_row.run_id, v_row.state::text, 'pending', p_reason, 'ok',
          jsonb_build_object('fromEpoch', v_head.current_epoch, 'toEpoch', v_head.current_epoch + 1) || coalesce(p_detail, '{}'::jsonb),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, v_head.current_epoch + 1, v_row.state, 'pending'::"EffectState", NULL::text;
END
$$;
