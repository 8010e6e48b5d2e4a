import { statement } from "./statement.ts";

export interface LeaseTasksParams {
  taskIds: string[];
  /** By task id, the machine it is leased to: a jsonb object. */
  machines: string;
  // One row per lease, in the order of `taskIds`: its id, machine, expiry (ms), piece rate
  // (micro-credits), whether it is a pilot, and the leases it was issued ahead of.
  leaseIds: string[];
  leaseMachines: string[];
  expires: number[];
  rates: string[];
  pilots: boolean[];
  aheads: number[];
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
 * `not-queued`, and nothing of it is written), their leases are inserted with the terms fixed for
 * each (resources/lease-terms.ts), jobs leased for the first time start running, and the tasks'
 * inputs come back.
 *
 * The tasks are found by key from the id array, and each one's machine is looked up in a jsonb
 * object keyed by task (a binary search), never joined to the group's rows: whatever the planner
 * estimated of such a join, it took a nested loop that rescanned the group for every task. The
 * lease rows are the parameters' arrays as they are: the refusal above keeps them from being
 * written for a task that did not move. A lease row has no foreign keys (migration
 * 20261126150000_lease_rows_unchecked).
 */
export const leaseTasks = statement<LeaseTasksParams, LeasedRow>(
  "lease-tasks",
  (p) => `
WITH moved AS (
  UPDATE "Task" t SET status = 'leased'::"TaskStatus", "machineId" = ${p.machines}::jsonb ->> t.id, attempts = t.attempts + 1
  WHERE t.id = ANY(${p.taskIds}::text[]) AND t.status = 'queued'::"TaskStatus"
  RETURNING t.id, t."jobId", t."machineId", t.args, t.stdin, t.env, t.files
), leased AS (
  INSERT INTO "Lease" (id, "taskId", "machineId", status, "issuedAt", "expiresAt", "pieceRateMicro", pilot, ahead)
  SELECT unnest(${p.leaseIds}::uuid[]), unnest(${p.taskIds}::text[]), unnest(${p.leaseMachines}::text[]), 'active'::"LeaseStatus",
    timestamp 'epoch' + ${p.now}::float8 * interval '1 millisecond', timestamp 'epoch' + unnest(${p.expires}::float8[]) * interval '1 millisecond',
    unnest(${p.rates}::bigint[]), unnest(${p.pilots}::boolean[]), unnest(${p.aheads}::int[])
), running AS (
  UPDATE "Job" SET status = 'running'::"JobStatus" WHERE id = ANY(${p.admitted}::text[]) AND status = 'admitted'::"JobStatus" AND EXISTS (SELECT 1 FROM moved)
)
SELECT moved.id, moved."jobId", moved.args, moved.stdin, moved.env, moved.files, j."moduleHash", j."taskLimits",
  CASE WHEN (SELECT count(*) FROM moved) <> cardinality(${p.taskIds}::text[])
    THEN market_refuse('not-queued', jsonb_build_object('moved', (SELECT count(*) FROM moved))) END AS short
FROM moved JOIN "Job" j ON j.id = moved."jobId"`,
);
