-- Revoking a planned target that was never claimed (S5: (none, planned) -> revoked): an operator
-- keeps a known-bad or withdrawn recipient out of every send before the first one. The key comes
-- from the approved plan row (P1), never from the caller's text. The key's head and its epoch-1 row
-- are created revoked, with the transition and the audit entry, in one transaction. If a claim got
-- there first (the key exists), nothing is written and `exists` is true: the caller revokes the
-- existing epoch through ledger_transition instead, under its lock.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_revoke_planned(
  p_key text, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_reason text, p_request jsonb
) RETURNS TABLE (ok boolean, "exists" boolean, epoch integer, run_id uuid, changed_at timestamptz, problem text)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_item plan_item%ROWTYPE;
  v_trigger text;
  v_effect bigint;
BEGIN
  SELECT pi.* INTO v_item FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
   WHERE pi.key = p_key ORDER BY pi.id LIMIT 1;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, false, NULL::integer, NULL::uuid, NULL::timestamptz,
      'not a target of an approved plan'::text;
    RETURN;
  END IF;
  SELECT ev.trigger_id INTO v_trigger FROM run r JOIN event ev ON ev.id = r.event_id WHERE r.id = v_item.run_id;

  INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                               current_epoch, state, changed_by, changed_at, created_at)
  VALUES (p_key, v_item.tool, v_item.action, v_item.record_id, v_item.target, v_item.target_type, v_trigger,
          v_item.run_id, 1, 'revoked', p_actor_label, now(), now())
  ON CONFLICT (key) DO NOTHING;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, true, NULL::integer, v_item.run_id, NULL::timestamptz, NULL::text;
    RETURN;
  END IF;

  INSERT INTO effect (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by, changed_at, created_at)
  VALUES (p_key, 1, 'revoked', v_item.run_id, ledger_idempotency_key(p_key, 1), p_actor_kind, p_actor_label,
          now(), now())
  RETURNING id INTO v_effect;

  INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, reason, at)
  VALUES (v_effect, p_key, 1, NULL, 'revoked', p_actor_kind, p_actor_id, p_reason, now());

  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                           action, subject_type, subject_id, run_id, before_state, after_state, reason,
                           outcome, detail, ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 1, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
          'effect.revoke', 'effect', p_key, v_item.run_id, 'not_sent', 'revoked', p_reason, 'ok',
          jsonb_build_object('epoch', 1, 'planned', true),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, false, 1, v_item.run_id, now(), NULL::text;
END
$$;
