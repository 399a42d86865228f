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
