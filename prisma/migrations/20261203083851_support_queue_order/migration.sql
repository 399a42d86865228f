-- DropIndex
DROP INDEX "effect_key_state_changed_at_idx";

-- CreateIndex
CREATE INDEX "effect_key_state_changed_at_key_idx" ON "effect_key"("state", "changed_at", "key");
