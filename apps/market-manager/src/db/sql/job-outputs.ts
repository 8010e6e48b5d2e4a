import { statement } from "./statement.ts";

/** One task's accepted output as the statements below read it. */
export interface OutputRow {
  index: number;
  args: string[];
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  outputHash: string;
  elapsedMs: number;
  machineId: string;
  machineName: string;
}

export interface OutputsPageParams {
  jobId: string;
  fromIndex: number;
  /** Tasks at most. */
  limit: number;
  /** Bytes of stdout and stderr at most (null: no bound); the first task is always sent. */
  maxBytes: number | null;
}

/**
 * A page of a job's accepted outputs in one statement, on the pages' readers and prepared once per
 * connection (a job's page reads it each time its count of finished tasks moves). At most
 * `replicas` accepted copies per task, so that many rows per task hold `limit` tasks; the page is
 * the tasks in index order while their outputs' running total stays within the bytes (the first
 * task always). The lowest accepted copy of a task stands for all of them (they agree).
 */
export const outputsPage = statement<OutputsPageParams, OutputRow>(
  "job-outputs",
  (p) => `
WITH copies AS (
  SELECT t.index, t.replica, t.args, t."acceptedResultId" AS result FROM "Task" t
  WHERE t."jobId" = ${p.jobId} AND t.index >= ${p.fromIndex} AND t."acceptedResultId" IS NOT NULL
  ORDER BY t.index, t.replica
  LIMIT ${p.limit}::int * coalesce((SELECT replicas FROM "Job" WHERE id = ${p.jobId}), 0)
), tasks AS (
  SELECT DISTINCT ON (index) index, args, result FROM copies ORDER BY index, replica
), page AS (
  SELECT t.index, t.args, r."exitCode", r.stdout, r.stderr, encode(r."outputHash", 'hex') AS "outputHash", r."elapsedMs", l."machineId",
    row_number() OVER w AS n, sum(octet_length(r.stdout) + octet_length(r.stderr)) OVER w AS used
  FROM (SELECT * FROM tasks ORDER BY index LIMIT ${p.limit}) t JOIN "Result" r ON r.id = t.result JOIN "Lease" l ON l.id = r.id
  WINDOW w AS (ORDER BY t.index)
)
SELECT p.index, p.args, p."exitCode", p.stdout, p.stderr, p."outputHash", p."elapsedMs", p."machineId", m.name AS "machineName"
FROM page p JOIN "Machine" m ON m.id = p."machineId"
WHERE p.n = 1 OR ${p.maxBytes}::bigint IS NULL OR p.used <= ${p.maxBytes}::bigint
ORDER BY p.index`,
);

/**
 * The accepted outputs of a job's tasks at `indices`, in index order (tasks not yet accepted left
 * out): one statement on the pages' readers, prepared once per connection, for a stream of the
 * job's outputs (api/live/job.ts).
 */
export const outputsAt = statement<{ jobId: string; indices: number[] }, OutputRow>(
  "job-outputs-at",
  (p) => `
SELECT DISTINCT ON (t.index) t.index, t.args, r."exitCode", r.stdout, r.stderr, encode(r."outputHash", 'hex') AS "outputHash", r."elapsedMs", l."machineId", m.name AS "machineName"
FROM "Task" t JOIN "Result" r ON r.id = t."acceptedResultId" JOIN "Lease" l ON l.id = r.id JOIN "Machine" m ON m.id = l."machineId"
WHERE t."jobId" = ${p.jobId} AND t.index = ANY(${p.indices}::int[])
ORDER BY t.index, t.replica`,
);

/**
 * Each task's accepted stdout (any accepted copy's: they agree), in task order, null for a task
 * without one: what a finished example's result is assembled from (tasks/results.ts finishJob).
 */
export const acceptedStdouts = statement<{ jobId: string }, { stdout: Uint8Array | null }>(
  "accepted-stdouts",
  (p) => `
SELECT (SELECT r.stdout FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id AND r.accepted
        WHERE t."jobId" = ${p.jobId} AND t.index = o.index LIMIT 1) AS stdout
FROM "Task" o WHERE o."jobId" = ${p.jobId} AND o.replica = 0 ORDER BY o.index`,
);
