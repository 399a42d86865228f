-- CreateTable
CREATE TABLE "notification_route" (
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "format" TEXT NOT NULL DEFAULT 'standard',
    "events" TEXT[],
    "workflows" TEXT[],
    "unknowns_threshold" INTEGER NOT NULL DEFAULT 1,
    "secret_env" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notification_route_pkey" PRIMARY KEY ("name")
);
