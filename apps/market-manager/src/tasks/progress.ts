import type { JsonValue } from "../db/generated/internal/prismaNamespace.ts";
import type { JobStatus } from "../db/generated/enums.ts";
import type { Prepared } from "../db/client.ts";
import { refuse } from "../api/errors.ts";

/**
 * The job and when each of its done copies was done, in one statement through the pool (prepared
 * once per connection; the chart polls it every 2 s while the job runs). Instants as milliseconds
 * since the epoch, as the market writes them (timestamps without a zone, in UTC).
 */
const PROGRESS_SQL = `
SELECT (extract(epoch FROM j."submittedAt") * 1000)::float8 AS "submittedAt",
  (extract(epoch FROM j."expectedCompletionAt") * 1000)::float8 AS "expectedCompletionAt",
  (extract(epoch FROM j."completedAt") * 1000)::float8 AS "completedAt",
  j.benefit, j."taskCount", j.replicas, j.status::text AS status,
  (SELECT coalesce(json_agg(json_build_array(t.index, (extract(epoch FROM t."completedAt") * 1000)::float8)), '[]'::json)
     FROM "Task" t WHERE t."jobId" = $1 AND t.status = 'done'::"TaskStatus" AND t."completedAt" IS NOT NULL) AS copies
FROM "Job" j WHERE j.id = $1`;

interface ProgressRow {
  submittedAt: number;
  expectedCompletionAt: number | null;
  completedAt: number | null;
  benefit: JsonValue;
  taskCount: number;
  replicas: number;
  status: JobStatus;
  copies: [number, number][];
}

/**
 * A job's progress over time, for its chart: when each task was done (seconds after the job
 * arrived), beside its benefit curve and the times the curve is read against. With k copies per
 * task, a task is done when a majority of its copies have run.
 */
export async function jobProgress(reads: Prepared, jobId: string) {
  const [row] = await reads.rows<ProgressRow>("job-progress", PROGRESS_SQL, [jobId]);
  if (!row) throw refuse.notFound("job");
  const byIndex = new Map<number, number[]>();
  for (const [index, at] of row.copies) byIndex.set(index, [...(byIndex.get(index) ?? []), at]);
  const majority = Math.floor(row.replicas / 2) + 1;
  const arrived = row.submittedAt;
  const doneAt = [...byIndex.values()]
    .filter((times) => times.length >= majority)
    .map((times) => (times.sort((a, b) => a - b)[majority - 1]! - arrived) / 1000)
    .sort((a, b) => a - b);
  const after = (ms: number | null) => (ms !== null ? (ms - arrived) / 1000 : null);
  return {
    status: row.status,
    taskCount: row.taskCount,
    benefit: row.benefit,
    /** Milliseconds since the epoch. */
    arrivedAt: arrived,
    /** Seconds after arrival. */
    doneAt,
    expectedCompletion: after(row.expectedCompletionAt),
    completed: after(row.completedAt),
  };
}
