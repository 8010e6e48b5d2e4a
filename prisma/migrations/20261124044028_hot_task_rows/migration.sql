-- DropIndex
DROP INDEX "Task_acceptedResultId_key";

-- DropIndex
DROP INDEX "Task_status_idx";

-- DropIndex
DROP INDEX "Task_machineId_idx";

-- DropIndex
DROP INDEX "Lease_status_expiresAt_idx";

-- CreateIndex
CREATE INDEX "Lease_taskId_idx" ON "Lease"("taskId");

-- A task row's three updates (placement, lease, done) change no indexed column, so each can be a
-- heap-only tuple, if its page has room for the new version: pages are filled half at insert.
-- A lease's renewals (a new expiry, unindexed now) likewise keep room on the lease's own page.
ALTER TABLE "Task" SET (fillfactor = 50);
ALTER TABLE "Lease" SET (fillfactor = 80);
