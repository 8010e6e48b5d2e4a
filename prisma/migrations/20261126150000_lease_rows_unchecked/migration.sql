-- A lease row is inserted once per run and ended in place. Its two foreign keys each cost a
-- trigger per row that ran a query and key-share locked the parent: in a small job's admission
-- (EXPLAIN ANALYZE, 20 tasks leased at admission) the task check took 1.37 of 3.6 ms, 68 us a
-- lease. Both statements that insert leases prove their parents in the same atomic unit instead,
-- as the result and posting rows do (migrations 20261124081500_result_rows_unchecked and
-- 20261126133000_posting_rows_unchecked):
-- - the lease statement (resources/leases.ts LEASE_ROWS_SQL) writes a lease only for a task it
--   moved from queued to leased in the same statement, on the machine it set in that task row,
--   and fails whole unless it moved every task it was given,
-- - a small job admission (tasks/admission.ts, with its intake) writes a lease only for a task
--   it inserted leased in the same statement, on the machine it placed that task on, and fails
--   whole unless every lease was written.
-- The task row is locked until the commit, more strongly than the check locked it, and its own
-- foreign key on the machine (kept) vouches for the lease machine, which is the same. Nothing
-- deletes a leased task (a task is deleted only with a job never admitted or rejected, so never
-- leased) or a machine (machines depart but their rows stay), so the parents outlive the lease.
-- schema.prisma keeps the relations (Prisma reads join them), only the constraints go.
ALTER TABLE "Lease" DROP CONSTRAINT "Lease_taskId_fkey";
ALTER TABLE "Lease" DROP CONSTRAINT "Lease_machineId_fkey";
