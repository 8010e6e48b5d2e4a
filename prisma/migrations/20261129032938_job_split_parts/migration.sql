-- AlterEnum
ALTER TYPE "JobStatus" ADD VALUE 'split';

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "partOf" TEXT,
ADD COLUMN     "taskOffset" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "Job_partOf_idx" ON "Job"("partOf");
