-- Chains an audit entry to the previous entry of its chain (A2).
-- STABLE, the volatility of the convert_to it calls, which is what lets PostgreSQL inline it: in
-- verification and in every append of the chain trigger. Declared IMMUTABLE (until
-- 20261130140100_audit_verify_single_pass), it was never inlined and every entry paid a full
-- SQL-function call around its sha256. PARALLEL SAFE (it is pure): verification recomputes every
-- entry's hash over parallel workers.
CREATE OR REPLACE FUNCTION audit_hash(prev_hash text, canonical text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT encode(sha256(convert_to(prev_hash || E'\n' || canonical, 'UTF8')), 'hex')
$$;
