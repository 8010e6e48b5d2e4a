-- A result row is appended once per run and never deleted. Its three foreign keys each cost a
-- trigger per row that ran a query and key-share locked the parent (a WAL record per task and
-- parent): three of the seven checks a task cost. Every statement that inserts a result proves its
-- parents in the same atomic unit instead:
-- - the plain reports' statement (tasks/report-rows.ts) updates, in the same statement, the lease
--   of that id, task and machine and the task itself, and fails whole unless it updated every one,
-- - completeTask (tasks/results.ts) updates, in the same transaction, the lease of that id, task
--   and machine, or the transaction fails.
-- The updated rows are locked until the commit, more strongly than the key-share lock the checks
-- took. The lease's own foreign keys (kept) vouch for its task and machine. Nothing deletes a lease,
-- a leased task or a machine (a task is deleted only with a job that was never admitted or was
-- rejected, so never leased, and machines depart but their rows stay), so the parents outlive the result.
-- schema.prisma keeps the relations (Prisma's reads join them), only the constraints go.
ALTER TABLE "Result" DROP CONSTRAINT "Result_taskId_fkey";
ALTER TABLE "Result" DROP CONSTRAINT "Result_leaseId_fkey";
ALTER TABLE "Result" DROP CONSTRAINT "Result_machineId_fkey";
