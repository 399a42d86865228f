-- Refuses a change to a ledger row that no ledger rule makes (EL004): a plan that does not start
-- submitted, a decided (rejected) plan changed again, an effect key renamed, a stored provider
-- response rewritten. The triggers that call it carry the condition in their WHEN clause (evaluated
-- without a function call) and the reason as their argument, so the ledger's own writes never pay
-- for a PL/pgSQL call.
CREATE OR REPLACE FUNCTION ledger_row_refuse() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% on %: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0] USING ERRCODE = 'EL004';
END
$$;
