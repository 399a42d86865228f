-- CreateIndex
CREATE INDEX "notification_user_id_created_at_id_idx" ON "notification"("user_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "notification_created_at_idx" ON "notification"("created_at");
