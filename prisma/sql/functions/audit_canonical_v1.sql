-- Canonical form version 1 of an audit entry (A2): a JSON array in a fixed order, as PostgreSQL prints
-- it. Entries written before version 2 (RFC 8785, audit_canonical_v2) keep it; audit_canonical picks
-- the form by the entry's canon_version. Its text depends on PostgreSQL's JSON printing, which is why
-- version 2 exists (docs/AUDIT.md).
-- json_build_array writes the text directly; jsonb_build_array (the first form, replaced in
-- 20261130120100_audit_canonical_json) built a binary jsonb value and then printed it. For the values
-- an audit entry holds (strings, one integer, nulls, a jsonb detail printed by jsonb's own output
-- function) both print byte for byte the same text, so every hash written with the first form still
-- verifies (tests/integration/audit-trail.test.ts compares the two forms on a busy trail).
-- PARALLEL SAFE (it is pure): verification recomputes every entry's hash over parallel workers.
CREATE OR REPLACE FUNCTION audit_canonical_v1(e audit_entry) RETURNS text
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
