-- CreateTable
CREATE TABLE "audit_checkpoint" (
    "id" BIGSERIAL NOT NULL,
    "chain" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "signed_at" TIMESTAMPTZ(6) NOT NULL,
    "key_id" TEXT NOT NULL,
    "signature" TEXT NOT NULL,

    CONSTRAINT "audit_checkpoint_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_checkpoint_chain_seq_key_id_key" ON "audit_checkpoint"("chain", "seq", "key_id");

-- Signed checkpoints are evidence like the trail (A2, A3): the application role may read and insert,
-- never update, delete or truncate; triggers refuse UPDATE, DELETE and TRUNCATE for the owner too.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_checkpoint FROM ledger_app;
GRANT SELECT, INSERT ON audit_checkpoint TO ledger_app;
GRANT USAGE, SELECT ON SEQUENCE audit_checkpoint_id_seq TO ledger_app;
CREATE TRIGGER audit_checkpoint_no_update BEFORE UPDATE OR DELETE ON audit_checkpoint
FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_checkpoint_no_truncate BEFORE TRUNCATE ON audit_checkpoint
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
