-- DropIndex
DROP INDEX "Task_jobId_index_key";

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "replica" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE UNIQUE INDEX "Task_jobId_index_replica_key" ON "Task"("jobId", "index", "replica");
