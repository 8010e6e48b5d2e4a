import { statement } from "./statement.ts";

/**
 * What a consumer was charged for its jobs settled from `since` on (ms since the epoch), per hour
 * with charges: each job's charge in the hour it was settled (a compensation counts negative).
 * Read by the index (ownerId, submittedAt) from a week before `since`, so a consumer's whole
 * history is never read: a job that took longer than that to settle is left out of the chart.
 */
export const consumerSpentHourly = statement<{ consumerId: string; since: number }, { hourly: [number, string][] }>(
  "consumer-spent-hourly",
  (p) => `
SELECT coalesce(json_agg(json_build_array(h, micro) ORDER BY h), '[]'::json) AS hourly FROM (
  SELECT (extract(epoch FROM date_trunc('hour', "completedAt")) * 1000)::float8 AS h, sum("chargedMicro")::text AS micro
  FROM "Job"
  WHERE "ownerId" = ${p.consumerId} AND "submittedAt" >= timestamp 'epoch' + (${p.since}::float8 - 7 * 86400000) * interval '1 millisecond'
    AND "completedAt" >= timestamp 'epoch' + ${p.since}::float8 * interval '1 millisecond' AND "chargedMicro" IS NOT NULL
  GROUP BY 1) x`,
);

/**
 * Tasks (every copy) still to run of a consumer's jobs held by other Market Managers: the rest of
 * its queue, which the manager asked holds in memory. Read by the index (ownerId, submittedAt).
 */
export const queuedTasksElsewhere = statement<{ consumerId: string; managerId: string }, { queued: number }>(
  "queued-tasks-elsewhere",
  (p) => `
SELECT coalesce(sum(greatest(0, "taskCount" - "tasksDone")::bigint * replicas), 0)::float8 AS queued
FROM "Job"
WHERE "ownerId" = ${p.consumerId} AND status IN ('delayed', 'admitted', 'running') AND "managerId" IS DISTINCT FROM ${p.managerId}`,
);
