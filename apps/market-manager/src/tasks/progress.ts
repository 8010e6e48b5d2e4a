import type { Prepared } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { prepared } from "../db/sql/runners.ts";
import { jobProgress as progressStatement } from "../db/sql/job-page.ts";
import { refuse } from "../api/errors.ts";

/**
 * A job's progress over time, for its chart: when each task was done (seconds after the job
 * arrived), beside its benefit curve and the times the curve is read against. With k copies per
 * task, a task is done when a majority of its copies have run.
 */
export async function jobProgress(reads: Prepared, jobId: string) {
  const [row] = await runStatement(prepared(reads), progressStatement, { jobId });
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
