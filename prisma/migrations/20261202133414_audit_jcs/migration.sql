-- Canonical form versions (docs/AUDIT.md). Every entry that exists now was hashed over form 1 and
-- keeps it: the column is added with 1 (no row is rewritten, nothing is re-chained), and only then does
-- the default become 2. The chain trigger sets 2 on every new entry whatever the writer sends.
ALTER TABLE "audit_entry" ADD COLUMN "canon_version" SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE "audit_entry" ALTER COLUMN "canon_version" SET DEFAULT 2;
ALTER TABLE "audit_entry" ADD CONSTRAINT "audit_entry_canon_version_known" CHECK ("canon_version" IN (1, 2));

-- prisma/sql/functions/audit_canonical_v1.sql (new function)
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

-- prisma/sql/functions/audit_chain_append.sql (changed: body)
-- Assigns seq, prev_hash, hash, the canonical form version and the database time (A2). Runs as the owner (SECURITY DEFINER) so the
-- app can extend a chain without being able to write chain heads itself. Locking only the chain's
-- head row keeps unrelated chains (different effect keys) from serializing on each other.
-- No SET search_path (a configuration save and restore per audit entry): every table and function is
-- named with its schema instead, which is what keeps a SECURITY DEFINER body from being pointed at
-- another object (a temporary table of the same name, for instance); only the owner may create
-- objects in public (20261130110000_claim_path_cost).
-- An append to an existing chain (every outcome after a claim) looks the head up first and computes
-- its hash once. An entry written with seq = 1 is a hint that it starts a new chain (a claim of a key
-- never claimed before), so the chain head is inserted first and the look-up that would find nothing
-- is skipped. The trigger still decides: if the chain exists, the insert does nothing and the entry
-- is appended after the head. Every other caller writes seq = 0.
CREATE OR REPLACE FUNCTION audit_chain_append() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  v_seq integer;
  v_prev text;
  v_created text;
  v_expect_new boolean := NEW.seq = 1;
BEGIN
  NEW.at := clock_timestamp();
  -- Every new entry is hashed over canonical form 2 (RFC 8785), whatever the writer set (docs/AUDIT.md).
  NEW.canon_version := 2;
  FOR attempt IN 1..2 LOOP
    IF NOT v_expect_new THEN
      -- Existing chain: the head row lock orders appends to this chain only.
      SELECT h.seq, h.hash INTO v_seq, v_prev FROM public.audit_chain_head h WHERE h.chain = NEW.chain FOR UPDATE;
      IF FOUND THEN
        NEW.seq := v_seq + 1;
        NEW.prev_hash := v_prev;
        NEW.hash := public.audit_hash(v_prev, public.audit_canonical(NEW));
        UPDATE public.audit_chain_head SET seq = NEW.seq, hash = NEW.hash WHERE chain = NEW.chain;
        RETURN NEW;
      END IF;
    END IF;
    v_expect_new := false;
    -- A new chain: one write, the head is born final.
    NEW.seq := 1;
    NEW.prev_hash := repeat('0', 64);
    NEW.hash := public.audit_hash(NEW.prev_hash, public.audit_canonical(NEW));
    INSERT INTO public.audit_chain_head (chain, seq, hash) VALUES (NEW.chain, 1, NEW.hash)
    ON CONFLICT (chain) DO NOTHING
    RETURNING chain INTO v_created;
    IF v_created IS NOT NULL THEN
      RETURN NEW;
    END IF;
    -- The chain exists (the hint was wrong, or another transaction created it between the look-up
    -- and the insert): append after its head.
  END LOOP;
  RAISE EXCEPTION 'audit chain % could not be extended', NEW.chain;
END
$$;

-- prisma/sql/functions/audit_jcs.sql (new function)
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
    SELECT '{' || coalesce(string_agg(to_json(m.key)::text || ':' || public.audit_jcs(m.value), ',' ORDER BY public.audit_utf16_key(m.key)), '') || '}'
      INTO out FROM jsonb_each(v) m;
    RETURN out;
  ELSIF t = 'array' THEN
    SELECT '[' || coalesce(string_agg(public.audit_jcs(a.value), ',' ORDER BY a.ord), '') || ']'
      INTO out FROM jsonb_array_elements(v) WITH ORDINALITY a(value, ord);
    RETURN out;
  ELSIF t = 'string' THEN
    RETURN to_json(v #>> '{}')::text;
  ELSIF t = 'number' THEN
    RETURN public.audit_jcs_number((v #>> '{}')::numeric);
  END IF;
  RETURN v::text; -- true, false, null
END
$$;

-- prisma/sql/functions/audit_jcs_number.sql (new function)
-- A JSON number as RFC 8785 writes it: the IEEE double nearest to it, printed as ECMAScript's
-- Number.prototype.toString does. Integers of magnitude below 2^53 are exact and print as digits.
-- Anything else goes through float8, whose text (with extra_float_digits >= 1, PostgreSQL's default)
-- is the shortest that reads back to the same double, the digits ECMAScript chooses too; only the
-- layout differs (PostgreSQL "1.5e-07", ECMAScript "1.5e-7"; exponent from 1e21 and below 1e-6).
CREATE OR REPLACE FUNCTION audit_jcs_number(n numeric) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  s text;
  neg boolean;
  mant text;
  ex integer := 0;
  digits text;
  pos integer;
  k integer;
  e integer;
BEGIN
  IF n = trunc(n) AND abs(n) < 9007199254740992 THEN
    RETURN trunc(n)::bigint::text;
  END IF;
  IF current_setting('extra_float_digits')::integer < 1 THEN
    PERFORM set_config('extra_float_digits', '1', true);
  END IF;
  s := (n::float8)::text;
  neg := left(s, 1) = '-';
  IF neg THEN s := substr(s, 2); END IF;
  IF position('e' IN s) > 0 THEN
    ex := split_part(s, 'e', 2)::integer;
    mant := split_part(s, 'e', 1);
  ELSE
    mant := s;
  END IF;
  -- value = 0.<digits> x 10^pos
  digits := replace(mant, '.', '');
  pos := length(split_part(mant, '.', 1)) + ex;
  WHILE left(digits, 1) = '0' AND length(digits) > 1 LOOP
    digits := substr(digits, 2);
    pos := pos - 1;
  END LOOP;
  digits := rtrim(digits, '0');
  IF digits = '' THEN RETURN '0'; END IF;
  k := length(digits);
  IF k <= pos AND pos <= 21 THEN
    s := digits || repeat('0', pos - k);
  ELSIF 0 < pos AND pos <= 21 THEN
    s := left(digits, pos) || '.' || substr(digits, pos + 1);
  ELSIF -6 < pos AND pos <= 0 THEN
    s := '0.' || repeat('0', -pos) || digits;
  ELSE
    e := pos - 1;
    s := left(digits, 1) || CASE WHEN k > 1 THEN '.' || substr(digits, 2) ELSE '' END
         || 'e' || CASE WHEN e >= 0 THEN '+' ELSE '-' END || abs(e)::text;
  END IF;
  RETURN CASE WHEN neg THEN '-' || s ELSE s END;
END
$$;

-- prisma/sql/functions/audit_utf16_key.sql (new function)
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

-- prisma/sql/functions/audit_canonical_v2.sql (new function)
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

-- prisma/sql/functions/audit_canonical.sql (changed: body)
-- The canonical content of an audit entry (A2), the text its hash covers, by the entry's canon_version:
-- 2 (every entry written since 20261202130000_audit_jcs) is RFC 8785 JSON, reproducible outside the
-- database (docs/AUDIT.md); 1 is the PostgreSQL-text form entries written before then were hashed
-- with, kept so that no existing entry is re-chained. Any other version is checked as 1, so a version
-- changed after the fact shows up as a content mismatch instead of skipping the check.
-- PARALLEL SAFE (it is pure): verification recomputes every entry's hash over parallel workers.
CREATE OR REPLACE FUNCTION audit_canonical(e audit_entry) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN e.canon_version = 2 THEN public.audit_canonical_v2(e) ELSE public.audit_canonical_v1(e) END
$$;

GRANT EXECUTE ON FUNCTION audit_canonical_v1, audit_canonical_v2, audit_jcs, audit_jcs_number, audit_utf16_key TO ledger_app;
