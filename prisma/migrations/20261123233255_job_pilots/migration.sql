-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "pilotCount" INTEGER,
ADD COLUMN     "pilotPriceMicro" BIGINT,
ADD COLUMN     "workEstimate" TEXT NOT NULL DEFAULT 'declared';
