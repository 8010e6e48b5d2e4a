-- A heap-only update logs the new row from the first byte that changed to the last: what lies
-- between is logged again even when it did not change. The task's three updates change its machine
-- and status (placement), its attempts and status (lease), its status and the columns of its
-- accepted run (done), and the status sat before the machine's id (text), so the lease and done
-- updates logged the unchanged machine id too, and done the attempts and the copy's number. The
-- table is rebuilt with its columns in the order the updates reach them: the inputs, written once,
-- then machine, attempts, status, accepted result, agreeing owners, completion. No foreign key
-- points at a task or from it (migrations 20261124081500_result_rows_unchecked,
-- 20261126150000_lease_rows_unchecked, 20261126190000_task_rows_unchecked). The market's role gets
-- its rights on the new table after the migrations (db/sql/owner.ts grantAppTables).
CREATE TABLE "Task_reordered" (
    "id" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "replica" INTEGER NOT NULL DEFAULT 0,
    "args" TEXT[],
    "stdin" BYTEA NOT NULL,
    "env" JSONB,
    "files" JSONB,
    "machineId" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "status" "TaskStatus" NOT NULL DEFAULT 'pending',
    "acceptedResultId" UUID,
    "agreedOwners" INTEGER,
    "completedAt" TIMESTAMP(3)
) WITH (fillfactor = 50);
INSERT INTO "Task_reordered" ("id", "jobId", "index", "replica", "args", "stdin", "env", "files", "machineId", "attempts", "status", "acceptedResultId", "agreedOwners", "completedAt")
SELECT "id", "jobId", "index", "replica", "args", "stdin", "env", "files", "machineId", "attempts", "status", "acceptedResultId", "agreedOwners", "completedAt" FROM "Task";
DROP TABLE "Task";
ALTER TABLE "Task_reordered" RENAME TO "Task";
ALTER TABLE "Task" ADD CONSTRAINT "Task_pkey" PRIMARY KEY ("id");
CREATE UNIQUE INDEX "Task_jobId_index_replica_key" ON "Task"("jobId", "index", "replica");
-- No ANALYZE here: on a new, empty cluster it records the table as known empty, and the
-- prepared statements of the journal then keep plans made for an empty table.
