-- Signed evidence is written only by the signer's connection (docs/AUDIT.md, "Who may write
-- signatures"). Before, the application role could INSERT into audit_checkpoint and audit_tree_head:
-- a planted row (any seq, a signature "AAAA") reached every auditor's checkpoints file and every
-- reader of the tree head. The signing round and the tree signer now connect as a login that is a
-- member of ledger_audit_signer (AUDIT_SIGNER_DATABASE_URL), or as the owner; the application role
-- keeps SELECT. ledger_audit_signer is a member of ledger_app: the signing round also appends its own
-- audit entry, through the same trigger as everyone else.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ledger_audit_signer') THEN
    CREATE ROLE ledger_audit_signer NOLOGIN;
  END IF;
END
$$;
GRANT ledger_app TO ledger_audit_signer;

REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_checkpoint, audit_tree_head FROM ledger_app;
GRANT SELECT ON audit_checkpoint, audit_tree_head TO ledger_app;
GRANT SELECT, INSERT ON audit_checkpoint, audit_tree_head TO ledger_audit_signer;
GRANT USAGE, SELECT ON SEQUENCE audit_checkpoint_id_seq, audit_tree_head_id_seq TO ledger_audit_signer;
