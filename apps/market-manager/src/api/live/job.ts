import { tracked } from "@trpc/server";
import type { Market, MarketEvent } from "../../market/market.ts";
import { jobView, outputsOf, outputView } from "../../tasks/views.ts";
import { changes } from "./changes.ts";

// One job's streams for its owner: its view each time it changes (progress), and each task's
// output once it is accepted (results). Both wake only on this job's events and end when the job
// has ended and everything was sent, so a client never polls pages to follow a job.

const FINAL = new Set(["completed", "failed", "cancelled", "rejected"]);
/** A busy job's progress is rebuilt at most this often. */
const PROGRESS_MIN_GAP_MS = 250;
/** Accepted outputs are looked for at most this often while tasks keep finishing. */
const RESULTS_MIN_GAP_MS = 100;
/** A wake-up this often even without events, so a change no event announced is still seen. */
const SAFETY_MS = 5_000;
/** Outputs read from the database at once: each may hold a mebibyte of stdout and one of stderr. */
const CHUNK_TASKS = 16;

const ofJob = (jobId: string) => (e: MarketEvent) => e.kind === "job" && e.jobId === jobId;

export type JobView = Awaited<ReturnType<typeof jobView>>;

/** The job's view whenever its status or its tasks' counts change; the last one is final. */
export async function* watchJob(market: Market, jobId: string, signal: AbortSignal | undefined): AsyncGenerator<JobView> {
  let shown = "";
  for await (const _ of changes(market, signal, { only: ofJob(jobId), minGapMs: PROGRESS_MIN_GAP_MS, everyMs: SAFETY_MS })) {
    const view = await jobView(market, jobId);
    const key = JSON.stringify([view.status, view.tasksDone, view.tasks]);
    if (key !== shown) {
      shown = key;
      yield view;
    }
    if (FINAL.has(view.status)) return;
  }
}

export type OutputEvent = { kind: "output"; output: ReturnType<typeof outputView> } | { kind: "end"; status: string };

/**
 * Each task's accepted output, in the order the tasks were accepted, then `end` once the job has
 * ended. The event id is the count of tasks from index 0 on that were all sent: a client that
 * reconnects with it is sent every accepted output from there (it may see a few twice; each
 * carries its index).
 */
export async function* jobResults(market: Market, jobId: string, resumeAt: string | null, signal: AbortSignal | undefined) {
  const db = market.db;
  let prefix = Math.max(0, Number.parseInt(resumeAt ?? "0", 10) || 0);
  const sent = new Set<number>();
  // Accepted copies of a task are identical; the lowest accepted copy stands for them.
  const accepted = { acceptedResultId: { not: null } };
  const order = [{ index: "asc" as const }, { replica: "asc" as const }];
  for await (const _ of changes(market, signal, { only: ofJob(jobId), minGapMs: RESULTS_MIN_GAP_MS, everyMs: SAFETY_MS })) {
    // The status first: a job that had ended by then had accepted all it ever will, read below.
    const { status } = await db.job.findUniqueOrThrow({ where: { id: jobId }, select: { status: true } });
    const done = await db.task.findMany({ where: { jobId, index: { gte: prefix }, ...accepted }, distinct: ["index"], orderBy: order, select: { index: true } });
    const fresh = done.map((t) => t.index).filter((i) => !sent.has(i));
    for (let k = 0; k < fresh.length; k += CHUNK_TASKS) {
      const chunk = await db.task.findMany({
        where: { jobId, index: { in: fresh.slice(k, k + CHUNK_TASKS) }, ...accepted },
        distinct: ["index"],
        orderBy: order,
        select: { index: true, args: true, acceptedResultId: true },
      });
      for (const out of await outputsOf(db, chunk)) {
        sent.add(out.index);
        for (; sent.has(prefix); prefix++) sent.delete(prefix);
        yield tracked(String(prefix), { kind: "output", output: outputView(out) } satisfies OutputEvent);
      }
    }
    if (FINAL.has(status)) {
      yield tracked(String(prefix), { kind: "end", status } satisfies OutputEvent);
      return;
    }
  }
}
