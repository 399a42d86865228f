-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('admin', 'operator', 'support', 'auditor');

-- CreateEnum
CREATE TYPE "EffectState" AS ENUM ('pending', 'done', 'failed', 'unknown', 'revoked', 'stuck');

-- CreateEnum
CREATE TYPE "TargetType" AS ENUM ('email', 'phone', 'url');

-- CreateEnum
CREATE TYPE "ActorKind" AS ENUM ('user', 'runtime', 'policy', 'reconciler', 'executor', 'system');

-- CreateEnum
CREATE TYPE "RunStatus" AS ENUM ('running', 'completed', 'crashed', 'replaying');

-- CreateEnum
CREATE TYPE "PlanStatus" AS ENUM ('submitted', 'approved', 'rejected');

-- CreateTable
CREATE TABLE "app_user" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "password_hash" TEXT,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "session_version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sign_in_failure" (
    "id" BIGSERIAL NOT NULL,
    "email" TEXT NOT NULL,
    "ip" TEXT NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sign_in_failure_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runtime_key" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "workflows" TEXT[],
    "created_by_id" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(6),
    "last_used_at" TIMESTAMPTZ(6),

    CONSTRAINT "runtime_key_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_definition" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "actions" TEXT[],
    "target_type" "TargetType" NOT NULL,
    "provider" TEXT NOT NULL,
    "generated_inputs" TEXT[],
    "supports_idempotency_key" BOOLEAN NOT NULL DEFAULT false,
    "supports_receipt_lookup" BOOLEAN NOT NULL DEFAULT false,
    "settle_window_seconds" INTEGER NOT NULL DEFAULT 60,
    "lease_seconds" INTEGER NOT NULL DEFAULT 300,
    "four_eyes_bump" BOOLEAN NOT NULL DEFAULT true,
    "four_eyes_replay" BOOLEAN NOT NULL DEFAULT true,
    "distinct_approver" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_definition_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event" (
    "id" UUID NOT NULL,
    "trigger_id" TEXT NOT NULL,
    "workflow" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(6),

    CONSTRAINT "event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run" (
    "id" UUID NOT NULL,
    "workflow" TEXT NOT NULL,
    "event_id" UUID NOT NULL,
    "status" "RunStatus" NOT NULL DEFAULT 'running',
    "tool_history" JSONB NOT NULL DEFAULT '[]',
    "tool_history_complete" BOOLEAN NOT NULL DEFAULT true,
    "created_by_kind" "ActorKind" NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "plan" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "status" "PlanStatus" NOT NULL DEFAULT 'submitted',
    "author_kind" "ActorKind" NOT NULL,
    "author_id" TEXT NOT NULL,
    "author_label" TEXT NOT NULL,
    "submitted_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "approved_by_id" UUID,
    "approved_at" TIMESTAMPTZ(6),
    "item_count" INTEGER NOT NULL DEFAULT 0,
    "items_hash" TEXT NOT NULL,

    CONSTRAINT "plan_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "plan_item" (
    "id" BIGSERIAL NOT NULL,
    "plan_id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "record_id" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "target_type" "TargetType" NOT NULL,

    CONSTRAINT "plan_item_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "effect_key" (
    "key" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "record_id" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "target_type" "TargetType" NOT NULL,
    "trigger_id" TEXT NOT NULL,
    "run_id" UUID NOT NULL,
    "current_epoch" INTEGER NOT NULL DEFAULT 1,
    "state" "EffectState" NOT NULL,
    "changed_by" TEXT NOT NULL,
    "changed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "effect_key_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "effect" (
    "id" BIGSERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL,
    "state" "EffectState" NOT NULL,
    "run_id" UUID NOT NULL,
    "receipt" TEXT,
    "idempotency_key" TEXT NOT NULL,
    "lease_expires_at" TIMESTAMPTZ(6),
    "awaiting_claim" BOOLEAN NOT NULL DEFAULT false,
    "changed_by_kind" "ActorKind" NOT NULL,
    "changed_by" TEXT NOT NULL,
    "changed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "effect_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempt" (
    "id" UUID NOT NULL,
    "effect_id" BIGINT NOT NULL,
    "key" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL,
    "run_id" UUID NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "response_status" INTEGER,
    "response_headers" JSONB,
    "response_body" BYTEA,
    "responded_at" TIMESTAMPTZ(6),

    CONSTRAINT "attempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "effect_transition" (
    "id" BIGSERIAL NOT NULL,
    "effect_id" BIGINT NOT NULL,
    "key" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL,
    "from_state" "EffectState",
    "to_state" "EffectState" NOT NULL,
    "actor_kind" "ActorKind" NOT NULL,
    "actor_id" TEXT NOT NULL,
    "reason" TEXT,
    "evidence" JSONB,
    "attempt_id" UUID,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "effect_transition_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_entry" (
    "id" BIGSERIAL NOT NULL,
    "chain" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL,
    "actor_kind" "ActorKind" NOT NULL,
    "actor_id" TEXT NOT NULL,
    "actor_label" TEXT NOT NULL,
    "actor_role" TEXT,
    "action" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "run_id" UUID,
    "before_state" TEXT,
    "after_state" TEXT,
    "reason" TEXT,
    "outcome" TEXT NOT NULL,
    "detail" JSONB,
    "ip" TEXT,
    "user_agent" TEXT,
    "request_id" TEXT,

    CONSTRAINT "audit_entry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_record" (
    "id" BIGSERIAL NOT NULL,
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(6),

    CONSTRAINT "idempotency_record_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approval_request" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "run_id" UUID,
    "payload" JSONB NOT NULL,
    "set_hash" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "requested_by_id" UUID NOT NULL,
    "requested_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "decided_by_id" UUID,
    "decided_at" TIMESTAMPTZ(6),

    CONSTRAINT "approval_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "replay" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'requested',
    "requested_by_id" UUID NOT NULL,
    "approved_by_id" UUID,
    "reason" TEXT NOT NULL,
    "set_hash" TEXT NOT NULL,
    "total" INTEGER NOT NULL,
    "sent" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "unknown" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(6),
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "replay_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "replay_item" (
    "id" BIGSERIAL NOT NULL,
    "replay_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL,
    "target" TEXT NOT NULL,
    "outcome" TEXT,
    "note" TEXT,

    CONSTRAINT "replay_item_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_chain_head" (
    "chain" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "audit_chain_head_pkey" PRIMARY KEY ("chain")
);

-- CreateIndex
CREATE UNIQUE INDEX "app_user_email_key" ON "app_user"("email");

-- CreateIndex
CREATE INDEX "sign_in_failure_email_at_idx" ON "sign_in_failure"("email", "at");

-- CreateIndex
CREATE INDEX "sign_in_failure_ip_at_idx" ON "sign_in_failure"("ip", "at");

-- CreateIndex
CREATE UNIQUE INDEX "runtime_key_prefix_key" ON "runtime_key"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "runtime_key_secret_hash_key" ON "runtime_key"("secret_hash");

-- CreateIndex
CREATE UNIQUE INDEX "tool_definition_name_key" ON "tool_definition"("name");

-- CreateIndex
CREATE UNIQUE INDEX "event_trigger_id_key" ON "event"("trigger_id");

-- CreateIndex
CREATE INDEX "run_workflow_created_at_idx" ON "run"("workflow", "created_at");

-- CreateIndex
CREATE INDEX "run_event_id_idx" ON "run"("event_id");

-- CreateIndex
CREATE INDEX "plan_run_id_idx" ON "plan"("run_id");

-- CreateIndex
CREATE INDEX "plan_item_run_id_target_id_idx" ON "plan_item"("run_id", "target", "id");

-- CreateIndex
CREATE INDEX "plan_item_key_idx" ON "plan_item"("key");

-- CreateIndex
CREATE UNIQUE INDEX "plan_item_plan_id_key_key" ON "plan_item"("plan_id", "key");

-- CreateIndex
CREATE INDEX "effect_key_run_id_state_idx" ON "effect_key"("run_id", "state");

-- CreateIndex
CREATE INDEX "effect_key_state_changed_at_idx" ON "effect_key"("state", "changed_at");

-- CreateIndex
CREATE INDEX "effect_state_lease_expires_at_idx" ON "effect"("state", "lease_expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "effect_key_epoch_key" ON "effect"("key", "epoch");

-- CreateIndex
CREATE INDEX "attempt_key_epoch_idx" ON "attempt"("key", "epoch");

-- CreateIndex
CREATE INDEX "effect_transition_key_epoch_id_idx" ON "effect_transition"("key", "epoch", "id");

-- CreateIndex
CREATE INDEX "audit_entry_at_idx" ON "audit_entry" USING BRIN ("at");

-- CreateIndex
CREATE INDEX "audit_entry_actor_id_at_idx" ON "audit_entry"("actor_id", "at");

-- CreateIndex
CREATE INDEX "audit_entry_run_id_at_idx" ON "audit_entry"("run_id", "at");

-- CreateIndex
CREATE UNIQUE INDEX "audit_entry_chain_seq_key" ON "audit_entry"("chain", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_record_scope_key_key" ON "idempotency_record"("scope", "key");

-- CreateIndex
CREATE INDEX "approval_request_status_requested_at_idx" ON "approval_request"("status", "requested_at");

-- CreateIndex
CREATE INDEX "replay_run_id_idx" ON "replay"("run_id");

-- CreateIndex
CREATE UNIQUE INDEX "replay_item_replay_id_key_key" ON "replay_item"("replay_id", "key");

-- AddForeignKey
ALTER TABLE "run" ADD CONSTRAINT "run_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "event"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "plan" ADD CONSTRAINT "plan_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "run"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "plan_item" ADD CONSTRAINT "plan_item_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plan"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "effect" ADD CONSTRAINT "effect_key_fkey" FOREIGN KEY ("key") REFERENCES "effect_key"("key") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "replay_item" ADD CONSTRAINT "replay_item_replay_id_fkey" FOREIGN KEY ("replay_id") REFERENCES "replay"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
