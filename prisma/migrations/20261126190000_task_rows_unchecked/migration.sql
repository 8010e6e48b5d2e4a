-- A task row's two foreign keys each cost a trigger per row that ran a query and key-share locked
-- the parent, on every insert (the job) and on every move to a machine (the machine): in
-- bench:dispatch (20 jobs of 1,000 tasks, pg_stat_statements) a job's task insert took 42-43 ms
-- with them and 22-25 ms without, a big job's admission (which places every task) 22 ms and 10-13,
-- PostgreSQL's CPU per task 0.200-0.204 ms and 0.173-0.182. Their parents are vouched for otherwise,
-- as the lease, result and posting rows' are (migrations 20261124081500_result_rows_unchecked,
-- 20261126133000_posting_rows_unchecked, 20261126150000_lease_rows_unchecked):
-- - the job. A small job's admission inserts its tasks in the statement that inserts its row
--   (tasks/admission.ts, with its intake), and fails whole if that insert fails. A big job's tasks
--   are inserted (tasks/intake.ts insertTasks) only after its row was committed, by a statement
--   that key-share locks that row once and takes the task rows' job id from it, so a job that is
--   gone leaves a null job id, which the column refuses, and the statement fails whole. A job's
--   tasks go before the job itself, in one transaction, where a job is deleted (a job whose intake
--   never finished, tasks/intake.ts and tasks/jobs.ts), as the cascade did.
-- - the machine. Every statement that sets a task's machine takes it from the market's memory,
--   which knows a machine only once its row is committed (resources/machines.ts registers it
--   first), and nothing deletes a machine (machines depart but their rows stay).
-- schema.prisma keeps the relations (Prisma reads join them), only the constraints go.
ALTER TABLE "Task" DROP CONSTRAINT "Task_jobId_fkey";
ALTER TABLE "Task" DROP CONSTRAINT "Task_machineId_fkey";
