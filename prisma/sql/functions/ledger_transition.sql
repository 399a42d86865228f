-- Transition (S2-S7): lock the effect row, check its state is one the caller may move from (the
-- caller passes the allowed sources from lib/ledger/transitions.ts), then write the change, the
-- transition row and the audit entry together. A refusal changes nothing but is itself audited on
-- the subject's "refused:" chain (A4), so the subject's own chain head does not move. A report that
-- names an attempt moves a pending effect only while that attempt is its newest claim.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_transition(
  p_key text, p_epoch integer, p_to "EffectState", p_allowed_from "EffectState"[],
  p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_action text, p_reason text, p_receipt text, p_evidence jsonb, p_attempt_id uuid,
  p_request jsonb
) RETURNS TABLE (
  ok boolean, epoch integer, from_state "EffectState", state "EffectState",
  changed_by text, changed_at timestamptz, receipt text, run_id uuid, problem text
)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_row effect%ROWTYPE;
  v_epoch integer := p_epoch;
  v_problem text;
BEGIN
  IF v_epoch IS NULL THEN
    SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  END IF;
  SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  IF NOT (v_row.state = ANY (p_allowed_from)) THEN
    v_problem := 'transition not allowed';
  ELSIF v_row.state = 'pending' AND v_row.awaiting_claim AND p_to <> 'revoked' THEN
    v_problem := 'the effect is awaiting its claim: nobody holds it';
  ELSIF v_row.state = 'pending' AND p_attempt_id IS NOT NULL AND p_attempt_id IS DISTINCT FROM (
      SELECT t.attempt_id FROM effect_transition t
       WHERE t.key = p_key AND t.epoch = v_epoch AND t.to_state = 'pending' AND t.attempt_id IS NOT NULL
       ORDER BY t.id DESC LIMIT 1) THEN
    -- A claim holder's report names its attempt, and counts only while that attempt is the newest
    -- claim of this (key, epoch): a late report of an earlier claim (a retry whose first try did
    -- commit, then the key was claimed again) must not move the claim that holds the key now.
    -- Newest by the claim's transition row, whose id is drawn under the effect row's lock, so it
    -- follows the order the claims took the key; an attempt's started_at is its transaction's start,
    -- which a claim that waited (in a batch, behind a lock) can have earlier than a claim before it.
    v_problem := 'a newer claim holds this key: this attempt''s report comes after it';
  END IF;

  IF v_problem IS NOT NULL THEN
    INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                             action, subject_type, subject_id, run_id, before_state, after_state, reason,
                             outcome, detail, ip, user_agent, request_id)
    VALUES ('refused:effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
            p_action, 'effect', p_key, v_row.run_id, v_row.state::text, p_to::text, p_reason, 'refused',
            jsonb_build_object('epoch', v_epoch, 'why', v_problem),
            p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');
    RETURN QUERY SELECT false, v_epoch, v_row.state, v_row.state, v_row.changed_by, v_row.changed_at, v_row.receipt, v_row.run_id, v_problem;
    RETURN;
  END IF;

  UPDATE effect e
     SET state = p_to,
         receipt = coalesce(p_receipt, e.receipt),
         awaiting_claim = (p_to = 'pending'),
         lease_expires_at = CASE WHEN p_to = 'pending' THEN NULL ELSE e.lease_expires_at END,
         changed_by_kind = p_actor_kind, changed_by = p_actor_label, changed_at = now()
   WHERE e.id = v_row.id;

  UPDATE effect_key k SET state = p_to, changed_by = p_actor_label, changed_at = now()
   WHERE k.key = p_key AND k.current_epoch = v_epoch;

  INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, reason,
                                 evidence, attempt_id, at)
  VALUES (v_row.id, p_key, v_epoch, v_row.state, p_to, p_actor_kind, p_actor_id, p_reason,
          p_evidence, p_attempt_id, now());

  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                           action, subject_type, subject_id, run_id, before_state, after_state, reason,
                           outcome, detail, ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
          p_action, 'effect', p_key, v_row.run_id, v_row.state::text, p_to::text, p_reason, 'ok',
          jsonb_strip_nulls(jsonb_build_object('epoch', v_epoch, 'receipt', p_receipt, 'evidence', p_evidence,
                                               'attemptId', p_attempt_id)),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, v_epoch, v_row.state, p_to, p_actor_label, now(), coalesce(p_receipt, v_row.receipt), v_row.run_id, NULL::text;
END
$$;
