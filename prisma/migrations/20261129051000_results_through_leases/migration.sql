-- A result takes its lease's id (migration 20261129050000_result_keyed_by_lease), so a task's
-- results are its leases' results: found by the lease's key on its task, then the result's primary
-- key. The result's own key on its task, an index entry per run, goes: every read of a task's or a
-- job's results goes Task, Lease, Result (db/sql, market/restore.ts).
DROP INDEX "Result_taskId_idx";
