-- AlterTable
ALTER TABLE "plan" ADD COLUMN     "rejected_at" TIMESTAMPTZ(6),
ADD COLUMN     "rejected_by_id" UUID,
ADD COLUMN     "rejection_reason" TEXT;
