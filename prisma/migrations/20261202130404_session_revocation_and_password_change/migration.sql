-- AlterTable
ALTER TABLE "app_user" ADD COLUMN     "must_change_password" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "session_revocation" (
    "session_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "revoked_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "session_revocation_pkey" PRIMARY KEY ("session_id")
);

-- CreateIndex
CREATE INDEX "session_revocation_expires_at_idx" ON "session_revocation"("expires_at");

-- AddForeignKey
ALTER TABLE "session_revocation" ADD CONSTRAINT "session_revocation_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
