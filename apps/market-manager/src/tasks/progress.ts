import type { Db } from "../db/client.ts";

/**
 * A job's progress over time, for its chart: when each task was done (seconds after the job
 * arrived), beside its benefit curve and the times the curve is read against. With k copies per
 * task, a task is done when a majority of its copies have run.
 */
export async function jobProgress(db: Db, jobId: string) {
  const job = await db.job.findUniqueOrThrow({
    where: { id: jobId },
    select: { submittedAt: true, decidedAt: true, expectedCompletionAt: true, completedAt: true, benefit: true, taskCount: true, replicas: true, status: true },
  });
  const copies = await db.task.findMany({ where: { jobId, status: "done", completedAt: { not: null } }, select: { index: true, completedAt: true } });
  const byIndex = new Map<number, number[]>();
  for (const c of copies) byIndex.set(c.index, [...(byIndex.get(c.index) ?? []), c.completedAt!.getTime()]);
  const majority = Math.floor(job.replicas / 2) + 1;
  const arrived = job.submittedAt.getTime();
  const doneAt = [...byIndex.values()]
    .filter((times) => times.length >= majority)
    .map((times) => (times.sort((a, b) => a - b)[majority - 1]! - arrived) / 1000)
    .sort((a, b) => a - b);
  const after = (d: Date | null) => (d ? (d.getTime() - arrived) / 1000 : null);
  return {
    status: job.status,
    taskCount: job.taskCount,
    benefit: job.benefit,
    /** Milliseconds since the epoch. */
    arrivedAt: job.submittedAt.getTime(),
    /** Seconds after arrival. */
    doneAt,
    expectedCompletion: after(job.expectedCompletionAt),
    completed: after(job.completedAt),
  };
}
