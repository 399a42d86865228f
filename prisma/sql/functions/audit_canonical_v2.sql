-- Canonical form version 2 of an audit entry (A2): the RFC 8785 (JCS) serialization of one JSON object
-- holding every field of the entry except its id and hash, under the names the JSON Lines export uses,
-- so that anyone holding an export recomputes the hash from the row itself (docs/AUDIT.md).
CREATE OR REPLACE FUNCTION audit_canonical_v2(e audit_entry) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT public.audit_jcs(jsonb_build_object(
    'version', e.canon_version, 'chain', e.chain, 'seq', e.seq, 'prev_hash', e.prev_hash,
    'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'actor_kind', e.actor_kind::text, 'actor_id', e.actor_id, 'actor_label', e.actor_label, 'actor_role', e.actor_role,
    'action', e.action, 'subject_type', e.subject_type, 'subject_id', e.subject_id, 'run_id', e.run_id::text,
    'before_state', e.before_state, 'after_state', e.after_state, 'reason', e.reason, 'outcome', e.outcome,
    'detail', e.detail, 'ip', e.ip, 'user_agent', e.user_agent, 'request_id', e.request_id
  ))
$$;
