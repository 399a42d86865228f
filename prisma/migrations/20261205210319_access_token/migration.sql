-- CreateTable
CREATE TABLE "access_token" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "revoked_at" TIMESTAMPTZ(6),
    "last_used_at" TIMESTAMPTZ(6),

    CONSTRAINT "access_token_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "access_token_prefix_key" ON "access_token"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "access_token_secret_hash_key" ON "access_token"("secret_hash");

-- CreateIndex
CREATE INDEX "access_token_user_id_idx" ON "access_token"("user_id");

-- AddForeignKey
ALTER TABLE "access_token" ADD CONSTRAINT "access_token_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A token's row is the evidence of who acted through it: the app may revoke one, never remove it.
REVOKE DELETE ON "access_token" FROM ledger_app;
