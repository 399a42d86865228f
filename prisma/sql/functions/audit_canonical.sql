-- The canonical content of an audit entry (A2): a JSON array in a fixed order. Every audit append
-- and every verification computes it once per entry.
-- json_build_array writes the text directly; jsonb_build_array (the first form, replaced in
-- 20261130120100_audit_canonical_json) built a binary jsonb value and then printed it. For the values
-- an audit entry holds (strings, one integer, nulls, a jsonb detail printed by jsonb's own output
-- function) both print byte for byte the same text, so every hash written with the first form still
-- verifies (tests/integration/audit-trail.test.ts compares the two forms on a busy trail).
-- PARALLEL SAFE (it is pure): verification recomputes every entry's hash over parallel workers.
CREATE OR REPLACE FUNCTION audit_canonical(e audit_entry) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_array(
    e.chain, e.seq, e.prev_hash,
    to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    e.actor_kind::text, e.actor_id, e.actor_label, e.actor_role,
    e.action, e.subject_type, e.subject_id, e.run_id::text,
    e.before_state, e.after_state, e.reason, e.outcome, e.detail,
    e.ip, e.user_agent, e.request_id
  )::text
$$;
