-- AlterTable
ALTER TABLE "run" ADD COLUMN     "pruned_at" TIMESTAMPTZ(6);
