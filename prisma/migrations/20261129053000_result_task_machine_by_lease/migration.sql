-- A result takes its lease's id (migration 20261129050000_result_keyed_by_lease), and every
-- statement that inserts one updates that lease, of the result's task and machine, in the same
-- atomic unit: the lease row holds both already. The result's own copies of them, two text ids in
-- every result row and so in the write-ahead log, go. Reads take them from the lease.
ALTER TABLE "Result" DROP COLUMN "taskId", DROP COLUMN "machineId";
