-- CreateTable
CREATE TABLE "notification_webhook" (
    "id" UUID NOT NULL,
    "route" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "response_status" INTEGER,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(6),

    CONSTRAINT "notification_webhook_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "notification_webhook_status_next_attempt_at_idx" ON "notification_webhook"("status", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "notification_webhook_route_event_type_subject_id_key" ON "notification_webhook"("route", "event_type", "subject_id");
