-- CreateTable
CREATE TABLE "provider_rate_slot" (
    "provider" TEXT NOT NULL,
    "next_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "provider_rate_slot_pkey" PRIMARY KEY ("provider")
);
