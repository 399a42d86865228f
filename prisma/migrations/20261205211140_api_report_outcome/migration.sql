-- prisma/sql/functions/api_report_outcome.sql (new function)
-- An outcome report of the agent API in one statement (lib/api/outcome-statement.ts): the caller's
-- runtime key row (read on every request, never cached: Z6), the workflow check of the effect's key
-- (Z6), the request's Idempotency-Key record reserved (Z5), the transition (ledger_transition, with
-- the raw response stored on its attempt: R1) and, when the transition is accepted, the answer stored
-- with the record. Measured: the report was two round trips and two commits (the key read with the
-- reservation, then the transition), each paying the pool, the protocol and a commit of its own.
--
-- It writes nothing unless every check it can make passes: a key that does not match, is revoked or
-- does not cover the effect's workflow, or an effect key nobody holds, comes back as stage 'refused'
-- and the application takes the usual way, which refuses (401 or 403, audited) or answers 404 itself.
-- A key used before comes back as stage 'taken' with nothing written: the earlier record decides. The
-- reservation comes before the transition, so of two concurrent duplicates exactly one runs (the
-- other's insert waits for the first's commit, then finds the key taken). A refused transition is
-- audited by ledger_transition and leaves the record reserved without an answer: the application
-- completes it with its own refusal, as for any reservation.
--
-- The actor is the runtime key the statement read: its id, and 'runtime:' || name as its label, as
-- lib/runtime-keys checkRuntimeKey names it (the application checks the row again and compares).
CREATE OR REPLACE FUNCTION api_report_outcome(
  p_prefix text, p_secret_hash text, p_scope_prefix text, p_idempotency_key text, p_request_hash text,
  p_key text, p_epoch integer, p_to "EffectState", p_allowed_from "EffectState"[], p_action text,
  p_reason text, p_receipt text, p_evidence jsonb, p_attempt_id uuid, p_request jsonb,
  p_response_status integer, p_response_headers jsonb, p_response_body bytea
) RETURNS TABLE (
  id text, name text, secret_hash text, workflows text[], revoked_at timestamptz, last_used_at timestamptz,
  stage text, record_id text, attempt_ok boolean, ok boolean, epoch integer, from_state "EffectState",
  state "EffectState", changed_by text, changed_at timestamptz, receipt text, run_id uuid, problem text,
  answer_status integer, answer_body jsonb
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
  v_key runtime_key%ROWTYPE;
  v_record bigint;
  v_attempt_ok boolean;
  v_t record;
  v_status integer;
  v_body jsonb;
BEGIN
  SELECT * INTO v_key FROM runtime_key k WHERE k.prefix = p_prefix;
  IF NOT FOUND THEN
    RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, NULL::text[], NULL::timestamptz, NULL::timestamptz,
      'refused', NULL::text, NULL::boolean, NULL::boolean, NULL::integer, NULL::"EffectState", NULL::"EffectState",
      NULL::text, NULL::timestamptz, NULL::text, NULL::uuid, NULL::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  IF v_key.secret_hash <> p_secret_hash OR v_key.revoked_at IS NOT NULL OR NOT (
      '*' = ANY (v_key.workflows) OR EXISTS (
        SELECT 1 FROM effect_key ek JOIN event ev ON ev.trigger_id = ek.trigger_id
         WHERE ek.key = p_key AND ev.workflow = ANY (v_key.workflows))) THEN
    RETURN QUERY SELECT v_key.id::text, v_key.name, v_key.secret_hash, v_key.workflows, v_key.revoked_at,
      v_key.last_used_at, 'refused', NULL::text, NULL::boolean, NULL::boolean, NULL::integer, NULL::"EffectState",
      NULL::"EffectState", NULL::text, NULL::timestamptz, NULL::text, NULL::uuid, NULL::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;

  INSERT INTO idempotency_record AS r (scope, key, request_hash)
  VALUES (p_scope_prefix || v_key.id::text, p_idempotency_key, p_request_hash)
  ON CONFLICT (scope, key) DO NOTHING
  RETURNING r.id INTO v_record;
  IF v_record IS NULL THEN
    RETURN QUERY SELECT v_key.id::text, v_key.name, v_key.secret_hash, v_key.workflows, v_key.revoked_at,
      v_key.last_used_at, 'taken', NULL::text, NULL::boolean, NULL::boolean, NULL::integer, NULL::"EffectState",
      NULL::"EffectState", NULL::text, NULL::timestamptz, NULL::text, NULL::uuid, NULL::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;

  -- The attempt named must be one of this key's: otherwise neither the transition nor the response's
  -- write runs (lib/ledger/commands/transition-effect.ts says the same of its own statement).
  v_attempt_ok := p_attempt_id IS NULL OR EXISTS (SELECT 1 FROM attempt a WHERE a.id = p_attempt_id AND a.key = p_key);
  IF NOT v_attempt_ok THEN
    RETURN QUERY SELECT v_key.id::text, v_key.name, v_key.secret_hash, v_key.workflows, v_key.revoked_at,
      v_key.last_used_at, 'ran', v_record::text, false, NULL::boolean, NULL::integer, NULL::"EffectState",
      NULL::"EffectState", NULL::text, NULL::timestamptz, NULL::text, NULL::uuid, NULL::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  SELECT * INTO v_t FROM ledger_transition(p_key, p_epoch, p_to, p_allowed_from, 'runtime', v_key.id::text,
    'runtime:' || v_key.name, NULL, p_action, p_reason, p_receipt, p_evidence, p_attempt_id, p_request);
  -- R1: the raw response is stored whether or not the transition is accepted (one stored is kept).
  UPDATE attempt a SET response_status = p_response_status, response_headers = p_response_headers,
         response_body = p_response_body, responded_at = now()
   WHERE a.id = p_attempt_id AND p_response_status IS NOT NULL AND a.responded_at IS NULL;
  IF v_t.ok THEN
    v_status := 200;
    v_body := jsonb_build_object(
      'key', p_key, 'epoch', v_t.epoch, 'from', v_t.from_state, 'state', v_t.state, 'changedBy', v_t.changed_by,
      'changedAt', to_char(v_t.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'receipt', v_t.receipt);
    UPDATE idempotency_record r SET response_status = v_status, response_body = v_body, completed_at = now()
     WHERE r.id = v_record;
  END IF;

  RETURN QUERY SELECT v_key.id::text, v_key.name, v_key.secret_hash, v_key.workflows, v_key.revoked_at,
    v_key.last_used_at, 'ran', v_record::text, v_attempt_ok, v_t.ok, v_t.epoch, v_t.from_state, v_t.state,
    v_t.changed_by, v_t.changed_at, v_t.receipt, v_t.run_id, v_t.problem, v_status, v_body;
END
$$;

-- The agent API's outcome reports call it as the app role; it runs as its caller (the ledger's
-- writes go through ledger_transition, itself granted).
REVOKE EXECUTE ON FUNCTION api_report_outcome(text, text, text, text, text, text, integer, "EffectState", "EffectState"[], text, text, text, jsonb, uuid, jsonb, integer, jsonb, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION api_report_outcome(text, text, text, text, text, text, integer, "EffectState", "EffectState"[], text, text, text, jsonb, uuid, jsonb, integer, jsonb, bytea) TO ledger_app;
