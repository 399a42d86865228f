-- CreateIndex
CREATE INDEX "replay_item_key_idx" ON "replay_item"("key");
