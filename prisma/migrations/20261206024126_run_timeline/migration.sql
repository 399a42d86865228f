-- CreateIndex
CREATE INDEX "attempt_run_id_started_at_idx" ON "attempt"("run_id", "started_at");

-- CreateIndex
CREATE INDEX "attempt_run_id_responded_at_idx" ON "attempt"("run_id", "responded_at");

-- CreateIndex
CREATE INDEX "effect_key_run_id_target_idx" ON "effect_key"("run_id", "target");
