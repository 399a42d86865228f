-- CreateIndex
CREATE INDEX "audit_entry_run_id_action_at_idx" ON "audit_entry"("run_id", "action", "at");
