-- prisma/sql/functions/audit_canonical_v2.sql (changed: body)
-- Canonical form version 2 of an audit entry (A2): the RFC 8785 (JCS) serialization of one JSON object
-- holding every field of the entry except its id and hash, under the names the JSON Lines export uses,
-- so that anyone holding an export recomputes the hash from the row itself (docs/AUDIT.md).
-- The member names are fixed ASCII, so they are written here already in JCS order; only the detail,
-- whose members are anyone's, goes through audit_jcs. Building a jsonb object and sorting it costs
-- about a hundred times more per entry, and every claim pays this in the chain trigger.
-- to_json(text) escapes exactly as JCS does (see audit_jcs.sql).
CREATE OR REPLACE FUNCTION audit_canonical_v2(e audit_entry) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '{"action":' || to_json(e.action)::text
    || ',"actor_id":' || to_json(e.actor_id)::text
    || ',"actor_kind":' || to_json(e.actor_kind::text)::text
    || ',"actor_label":' || to_json(e.actor_label)::text
    || ',"actor_role":' || coalesce(to_json(e.actor_role)::text, 'null')
    || ',"after_state":' || coalesce(to_json(e.after_state)::text, 'null')
    || ',"at":"' || to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
    || ',"before_state":' || coalesce(to_json(e.before_state)::text, 'null')
    || ',"chain":' || to_json(e.chain)::text
    || ',"detail":' || coalesce(public.audit_jcs(e.detail), 'null')
    || ',"ip":' || coalesce(to_json(e.ip)::text, 'null')
    || ',"outcome":' || to_json(e.outcome)::text
    || ',"prev_hash":' || to_json(e.prev_hash)::text
    || ',"reason":' || coalesce(to_json(e.reason)::text, 'null')
    || ',"request_id":' || coalesce(to_json(e.request_id)::text, 'null')
    || ',"run_id":' || coalesce('"' || e.run_id::text || '"', 'null')
    || ',"seq":' || e.seq::text
    || ',"subject_id":' || to_json(e.subject_id)::text
    || ',"subject_type":' || to_json(e.subject_type)::text
    || ',"user_agent":' || coalesce(to_json(e.user_agent)::text, 'null')
    || ',"version":' || e.canon_version::text
    || '}'
$$;

-- prisma/sql/functions/audit_jcs.sql (changed: body)
-- RFC 8785 (JSON Canonicalization Scheme) text of a jsonb value, for audit_canonical_v2: no
-- whitespace; object members sorted by their names' UTF-16 code units (audit_utf16_key); strings
-- escaped as ECMAScript's JSON.stringify does, which is exactly what PostgreSQL's to_json(text) does
-- (", \, \b \f \n \r \t, other control characters as lower-case \u00xx, everything else as is);
-- numbers as ECMAScript prints the IEEE double (audit_jcs_number).
CREATE OR REPLACE FUNCTION audit_jcs(v jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  t text := jsonb_typeof(v);
  out text;
BEGIN
  IF t = 'object' THEN
    -- Byte order of UTF-8 (COLLATE "C") is code point order, which is UTF-16 order unless a name
    -- holds a character above U+FFFF: only then is the slower UTF-16 sort key computed.
    IF EXISTS (SELECT 1 FROM jsonb_object_keys(v) k WHERE k ~ '[\U00010000-\U0010FFFF]') THEN
      SELECT '{' || string_agg(to_json(m.key)::text || ':' || public.audit_jcs(m.value), ',' ORDER BY public.audit_utf16_key(m.key)) || '}'
        INTO out FROM jsonb_each(v) m;
    ELSE
      SELECT '{' || coalesce(string_agg(to_json(m.key)::text || ':' || public.audit_jcs(m.value), ',' ORDER BY m.key COLLATE "C"), '') || '}'
        INTO out FROM jsonb_each(v) m;
    END IF;
    RETURN out;
  ELSIF t = 'array' THEN
    SELECT '[' || coalesce(string_agg(public.audit_jcs(a.value), ',' ORDER BY a.ord), '') || ']'
      INTO out FROM jsonb_array_elements(v) WITH ORDINALITY a(value, ord);
    RETURN out;
  ELSIF t = 'string' THEN
    RETURN v::text; -- jsonb prints a string with the same escapes as to_json(text)
  ELSIF t = 'number' THEN
    RETURN public.audit_jcs_number((v #>> '{}')::numeric);
  END IF;
  RETURN v::text; -- true, false, null
END
$$;
