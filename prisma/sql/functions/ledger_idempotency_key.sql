-- The provider idempotency key for (key, epoch) (R2): stable across processes and releases.
-- STABLE, like the convert_to it calls (the reason audit_hash is STABLE): PostgreSQL inlines it
-- instead of calling a SQL function per claim (20261130160000_claim_batch_fixed_cost). Same bytes.
CREATE OR REPLACE FUNCTION ledger_idempotency_key(p_key text, p_epoch integer) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT 'el1-' || left(encode(sha256(convert_to(p_key || E'\n' || p_epoch::text, 'UTF8')), 'hex'), 40)
$$;
