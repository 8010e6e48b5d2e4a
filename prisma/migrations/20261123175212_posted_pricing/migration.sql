-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "pricing" TEXT NOT NULL DEFAULT 'posted';
