-- The first entry that does not verify (A2), or no row when the whole trail verifies: audit_verify()'s
-- answer without its counts, under the signature and answer it has had since the first migration.
CREATE OR REPLACE FUNCTION audit_first_broken() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT v.entry_id, v.chain, v.seq, v.problem FROM audit_verify() v WHERE v.problem IS NOT NULL
$$;
