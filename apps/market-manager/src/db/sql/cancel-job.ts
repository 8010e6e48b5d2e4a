// A job's cancellation (tasks/cancel.ts): its transaction, then its unstarted tasks a chunk at a
// time. Instants go as milliseconds since the epoch, as the admission's statements take them.
import { statement } from "./statement.ts";

/**
 * How long the statements after it in the transaction wait for a row another transaction holds
 * (a duration PostgreSQL reads, `200ms`), for that transaction only.
 */
export const lockTimeout = statement<{ timeout: string }, { set_config: string }>("lock-timeout", (p) => `SELECT set_config('lock_timeout', ${p.timeout}, true)`);

interface EndParams {
  jobId: string;
  /** When the job ended (ms since the epoch). */
  at: number;
}

/** The job's active leases end, abandoned, at `at`. */
export const abandonJobLeases = statement<EndParams, never>(
  "abandon-job-leases",
  (p) => `
UPDATE "Lease" SET status = 'abandoned', "endedAt" = timestamp 'epoch' + ${p.at}::float8 * interval '1 millisecond'
WHERE status = 'active' AND "taskId" IN (SELECT id FROM "Task" WHERE "jobId" = ${p.jobId})`,
);

/** The job's running tasks fail with it. */
export const failLeasedTasks = statement<{ jobId: string }, never>(
  "fail-leased-tasks",
  (p) => `UPDATE "Task" SET status = 'failed', "machineId" = NULL WHERE "jobId" = ${p.jobId} AND status = 'leased'`,
);

/** The job's row, cancelled at `at` and charged `charged` (micro-credits as text). */
export const cancelledJob = statement<EndParams & { charged: string }, never>(
  "cancelled-job",
  (p) => `
UPDATE "Job" SET status = 'cancelled', "completedAt" = timestamp 'epoch' + ${p.at}::float8 * interval '1 millisecond', "chargedMicro" = ${p.charged}::bigint
WHERE id = ${p.jobId}`,
);

/**
 * Up to `chunk` of a cancelled job's tasks that never started, failed, the chunk chosen in the
 * database: reading the ids and sending them back had the client build and compile a
 * 1,000-value query on the market's thread (issue 16). How many it failed: none left when 0.
 */
export const failUnstartedTasks = statement<{ jobId: string; chunk: number }, { failed: number }>(
  "fail-unstarted-tasks",
  (p) => `
WITH failed AS (
  UPDATE "Task" SET status = 'failed', "machineId" = NULL
  WHERE id IN (SELECT id FROM "Task" WHERE "jobId" = ${p.jobId} AND status IN ('pending', 'queued') LIMIT ${p.chunk}::int)
  RETURNING 1
)
SELECT count(*)::int AS failed FROM failed`,
);
