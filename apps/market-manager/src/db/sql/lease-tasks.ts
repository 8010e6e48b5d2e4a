import { statement } from "./statement.ts";

export interface LeaseTasksParams {
  taskIds: string[];
  /** By task id: `m` machine, `l` lease id, `e` expiry (ms), `p` piece rate (micro-credits), `pi` pilot, `a` leases ahead. */
  leases: string;
  now: number;
  /** Jobs leased for the first time: they start running. */
  admitted: string[];
}

export interface LeasedRow {
  id: string;
  jobId: string;
  args: string[];
  stdin: Uint8Array;
  env: unknown;
  files: unknown;
  moduleHash: string;
  taskLimits: unknown;
}

/**
 * A group's leases in one statement, so in one round trip and atomic without a transaction: the
 * tasks move to leased only if every one of them is still queued (else the statement is refused,
 * `not-queued`, and none moves), their leases are inserted with the terms fixed for each
 * (resources/lease-terms.ts), jobs leased for the first time start running, and the tasks' inputs
 * come back.
 *
 * The tasks are found by key from the id array, and each one's lease is looked up in a jsonb object
 * keyed by task (a binary search), never joined to the group's rows: whatever the planner
 * estimated of such a join, it took a nested loop that rescanned the group for every task. The
 * lease rows come from the moved tasks alone, so they too are written without a join. A lease row
 * has no foreign keys (migration 20261126150000_lease_rows_unchecked): it is written only for a
 * task this statement moved to leased, on the machine it set in that task's row.
 */
export const leaseTasks = statement<LeaseTasksParams, LeasedRow>(
  "lease-tasks",
  (p) => `
WITH moved AS (
  UPDATE "Task" t SET status = 'leased'::"TaskStatus", "machineId" = ${p.leases}::jsonb -> t.id ->> 'm', attempts = t.attempts + 1
  WHERE t.id = ANY(${p.taskIds}::text[]) AND t.status = 'queued'::"TaskStatus"
  RETURNING t.id, t."jobId", t."machineId", t.args, t.stdin, t.env, t.files
), leased AS (
  INSERT INTO "Lease" (id, "taskId", "machineId", status, "issuedAt", "expiresAt", "pieceRateMicro", pilot, ahead)
  SELECT x ->> 'l', moved.id, moved."machineId", 'active'::"LeaseStatus", timestamp 'epoch' + ${p.now}::float8 * interval '1 millisecond',
    timestamp 'epoch' + (x ->> 'e')::float8 * interval '1 millisecond', (x ->> 'p')::bigint, (x ->> 'pi')::boolean, (x ->> 'a')::int
  FROM moved, LATERAL (SELECT ${p.leases}::jsonb -> moved.id AS x) terms
), running AS (
  UPDATE "Job" SET status = 'running'::"JobStatus" WHERE id = ANY(${p.admitted}::text[]) AND status = 'admitted'::"JobStatus" AND EXISTS (SELECT 1 FROM moved)
)
SELECT moved.id, moved."jobId", moved.args, moved.stdin, moved.env, moved.files, j."moduleHash", j."taskLimits",
  CASE WHEN (SELECT count(*) FROM moved) <> cardinality(${p.taskIds}::text[])
    THEN market_refuse('not-queued', jsonb_build_object('moved', (SELECT count(*) FROM moved))) END AS short
FROM moved JOIN "Job" j ON j.id = moved."jobId"`,
);

/** A lease's terms as the lease statement's jsonb object holds them. */
export const leaseTermsJson = (machineId: string, leaseId: string, t: { expiresAt: number; pieceRateMicro: bigint; pilot: boolean; ahead: number }) => ({
  m: machineId,
  l: leaseId,
  e: t.expiresAt,
  p: String(t.pieceRateMicro),
  pi: t.pilot,
  a: t.ahead,
});
