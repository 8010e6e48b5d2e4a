-- Several Market Managers on one database (issue 47): each machine and job names the manager that
-- holds it, and the managers find each other, and notice one another's death, in market_manager.
-- Rows from before have no manager: the first manager to start takes them.
-- AlterTable
ALTER TABLE "Machine" ADD COLUMN     "managerId" TEXT;

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "managerId" TEXT;

-- CreateTable
CREATE TABLE "market_manager" (
    "id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "healthUrl" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "heartbeatAt" TIMESTAMP(3) NOT NULL,
    "machines" INTEGER NOT NULL DEFAULT 0,
    "jobs" INTEGER NOT NULL DEFAULT 0,
    "capacity" INTEGER NOT NULL DEFAULT 10000,
    "tasksDone" BIGINT NOT NULL DEFAULT 0,
    "claimedBy" TEXT,
    "claimedAt" TIMESTAMP(3),

    CONSTRAINT "market_manager_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Machine_managerId_status_idx" ON "Machine"("managerId", "status");

-- CreateIndex
CREATE INDEX "Job_managerId_status_idx" ON "Job"("managerId", "status");
