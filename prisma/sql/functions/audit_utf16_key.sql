-- The order RFC 8785 sorts object members by: the UTF-16 code units of their names. For names within
-- the Basic Multilingual Plane that is code point order; a character above U+FFFF counts as its two
-- surrogates (0xD800-0xDBFF, 0xDC00-0xDFFF), so it sorts before U+E000-U+FFFF, not after.
CREATE OR REPLACE FUNCTION audit_utf16_key(k text) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(u.unit ORDER BY c.ord, u.part), '{}')
  FROM unnest(string_to_array(k, NULL)) WITH ORDINALITY c(ch, ord),
       LATERAL (VALUES
         (1, CASE WHEN ascii(c.ch) < 65536 THEN ascii(c.ch) ELSE 55296 + ((ascii(c.ch) - 65536) >> 10) END),
         (2, CASE WHEN ascii(c.ch) >= 65536 THEN 56320 + ((ascii(c.ch) - 65536) & 1023) END)
       ) u(part, unit)
  WHERE u.unit IS NOT NULL
$$;
