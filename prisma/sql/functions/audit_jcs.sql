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
