-- A forced replay's claim of one frozen target (F3, F4): ledger_claim, made only while the target is
-- still in the state the executor decided on (its fingerprint: view state, epoch and time of its last
-- change, as lib/replay/set.ts computes it). The executor reads a window of items, then waits for the
-- provider's rate limit, possibly for minutes, before it claims; a target that another actor moved
-- meanwhile (failed again by an agent, claimed and given up, bumped to a new epoch) must not be sent.
-- The comparison is made under the same locks ledger_claim takes, in its lock order (the effect row,
-- then the key head), so no change can slip in between the check and the claim.
-- A key that did not exist is created here, with ledger_claim's own head insert: while this
-- transaction holds the new head, a concurrent claimer waits for it; one that got there first makes
-- the target moved. Otherwise the row is ledger_claim's, with moved_to NULL; when the target moved,
-- nothing is written and moved_to is its fingerprint now.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_claim_frozen(
  p_key text, p_tool text, p_action text, p_record_id text, p_target text, p_target_type "TargetType",
  p_trigger_id text, p_run_id uuid, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text,
  p_lease_seconds integer, p_request jsonb, p_expected text
) RETURNS TABLE (
  claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint, moved_to text
)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_epoch integer;
  v_head effect_key%ROWTYPE;
  v_row effect%ROWTYPE;
  v_now text;
BEGIN
  SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  IF NOT FOUND THEN
    IF split_part(p_expected, '@', 1) = 'not_sent' THEN
      INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                                   current_epoch, state, changed_by, changed_at, created_at)
      VALUES (p_key, p_tool, p_action, p_record_id, p_target, p_target_type, p_trigger_id, p_run_id,
              1, 'pending', p_actor_label, now(), now())
      ON CONFLICT (key) DO NOTHING
      RETURNING k.current_epoch INTO v_epoch;
      IF v_epoch IS NOT NULL THEN
        RETURN QUERY SELECT c.*, NULL::text FROM ledger_claim(p_key, p_tool, p_action, p_record_id, p_target,
          p_target_type, p_trigger_id, p_run_id, p_actor_kind, p_actor_id, p_actor_label, p_lease_seconds, p_request) c;
        RETURN;
      END IF;
      -- Another claimer created the key between the read above and this insert.
      SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
    END IF;
    IF v_epoch IS NULL THEN
      RETURN QUERY SELECT false, 1, NULL::"EffectState", NULL::uuid, ledger_idempotency_key(p_key, 1),
                          NULL::text, NULL::timestamptz, NULL::bigint, 'gone'::text;
      RETURN;
    END IF;
  END IF;

  SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
  SELECT * INTO v_head FROM effect_key k WHERE k.key = p_key FOR UPDATE;
  IF v_head.current_epoch = v_epoch THEN
    v_now := CASE WHEN v_row.state = 'pending' AND v_row.awaiting_claim THEN 'awaiting_claim'
                  WHEN v_row.state = 'pending' THEN 'in_flight'
                  ELSE v_row.state::text END
             || '@' || v_epoch || '@'
             || coalesce(to_char(v_head.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '-');
  ELSE
    -- A bump committed between the unlocked read and the locks: the epoch moved on.
    v_now := v_head.state::text || '@' || v_head.current_epoch || '@'
             || coalesce(to_char(v_head.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '-');
  END IF;
  IF v_head.current_epoch <> v_epoch OR v_now IS DISTINCT FROM p_expected THEN
    RETURN QUERY SELECT false, v_head.current_epoch, v_head.state, NULL::uuid,
                        ledger_idempotency_key(p_key, v_head.current_epoch), v_head.changed_by, v_head.changed_at,
                        NULL::bigint, v_now;
    RETURN;
  END IF;
  RETURN QUERY SELECT c.*, NULL::text FROM ledger_claim(p_key, p_tool, p_action, p_record_id, p_target,
    p_target_type, p_trigger_id, p_run_id, p_actor_kind, p_actor_id, p_actor_label, p_lease_seconds, p_request) c;
END
$$;
