-- Marks every new audit entry as not yet in the audit tree (docs/AUDIT.md): one statement-level
-- trigger per INSERT statement on audit_entry, one insert into audit_tree_pending for its rows. This is
-- all the append path pays for the tree: no lock shared between chains, no hashing. SECURITY DEFINER
-- so the application role cannot write the pending set itself. Tables are named with their schema
-- (no SET search_path, as in audit_chain_append).
CREATE OR REPLACE FUNCTION audit_tree_enqueue() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  INSERT INTO public.audit_tree_pending (entry_id) SELECT f.id FROM fresh f;
  RETURN NULL;
END
$$;
