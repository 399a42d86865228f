-- The audit trail is append-only (A2): its triggers refuse every update, delete and truncate of
-- audit_entry and every truncate of audit_chain_head, whoever asks, the owner included. EL003.
CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit trail is append-only: % refused', TG_OP USING ERRCODE = 'EL003';
END
$$;
