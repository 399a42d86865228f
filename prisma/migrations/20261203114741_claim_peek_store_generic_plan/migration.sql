-- ledger_claim_peek_store plans generically (prisma/sql/functions/ledger_claim_peek_store.sql shows
-- the whole definition). It takes arrays whose length changes from call to call, so PostgreSQL judged
-- every custom plan cheaper and planned the statement again on every call: three quarters of the
-- database's CPU per replayed claim (docs/BENCHMARKS.md). ledger_claim_batch carries the same setting.
ALTER FUNCTION ledger_claim_peek_store(text[], text[], text[], text[], text[], text[], text)
  SET plan_cache_mode = force_generic_plan;
