import { tracked } from "@trpc/server";
import type { Market, MarketEvent } from "../../market/market.ts";
import type { LiveJob } from "../../market/live.ts";
import { outputsAt, outputView } from "../../tasks/views.ts";
import { jobPage, splitParts, wholeOutputs, wholeStatus, partsOf } from "../../tasks/split-view.ts";
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
/** A split job's parts run on other managers too, whose events this one does not hear: it looks this often. */
const SPLIT_LOOK_MS = 1_000;
/** Outputs read from the database at once: each may hold a mebibyte of stdout and one of stderr. */
const CHUNK_TASKS = 16;

const ofJob = (jobId: string) => (e: MarketEvent) => e.kind === "job" && e.jobId === jobId;

export type JobView = Awaited<ReturnType<typeof jobPage>>;

/** The job's view whenever its status or its tasks' counts change; the last one is final. */
export async function* watchJob(market: Market, jobId: string, signal: AbortSignal | undefined): AsyncGenerator<JobView> {
  let shown = "";
  const everyMs = (await splitParts(market.db, jobId, market)) ? SPLIT_LOOK_MS : SAFETY_MS;
  for await (const _ of changes(market, signal, { only: ofJob(jobId), minGapMs: PROGRESS_MIN_GAP_MS, everyMs })) {
    const view = await jobPage(market, jobId);
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
 *
 * Which tasks have an output to send: while the job is in the market's memory, the tasks decided
 * since the last look, from the stream's place in the job's list of decided tasks (LiveJob
 * `decided`); the first time, after the job ends or when memory holds another copy of the job
 * (the manager started again), from PostgreSQL, from the lowest index not yet sent. That place is
 * taken before PostgreSQL is read, so a task decided meanwhile is found by one or the other (and
 * sent once). The outputs are read 16 tasks to a statement (outputsAt). Following a big job to
 * its end cost more than running it while each look read every task from the lowest not yet sent
 * to the job's end (bench:dispatch --jobTasks 10000 --follow measures it); most of what is left is
 * each output's own server-sent event.
 */
export async function* jobResults(market: Market, jobId: string, resumeAt: string | null, signal: AbortSignal | undefined) {
  const db = market.db;
  let prefix = Math.max(0, Number.parseInt(resumeAt ?? "0", 10) || 0);
  if (await splitParts(db, jobId, market)) {
    yield* wholeResults(market, jobId, prefix, signal);
    return;
  }
  const sent = new Set<number>();
  /** The job in memory this stream follows, and its place in the job's list of decided tasks. */
  let following: LiveJob | undefined;
  let place = 0;
  for await (const _ of changes(market, signal, { only: ofJob(jobId), minGapMs: RESULTS_MIN_GAP_MS, everyMs: SAFETY_MS })) {
    const live = market.state.jobs.get(jobId);
    let fresh: number[];
    // A job in memory has not ended (it leaves memory once its end is written).
    let status: string | null = null;
    if (live && live === following) {
      const decided = live.decided ?? [];
      fresh = decided.slice(place).filter((i) => i >= prefix && !sent.has(i));
      place = decided.length;
    } else {
      // The status first: a job that had ended by then had accepted all it ever will, read below.
      ({ status } = await db.job.findUniqueOrThrow({ where: { id: jobId }, select: { status: true } }));
      following = market.state.jobs.get(jobId);
      place = following?.decided?.length ?? 0;
      // Accepted copies of a task are identical; any one of them says the task has an output.
      const done = await db.task.findMany({ where: { jobId, index: { gte: prefix }, acceptedResultId: { not: null } }, distinct: ["index"], select: { index: true } });
      fresh = done.map((t) => t.index).filter((i) => !sent.has(i));
    }
    fresh.sort((a, b) => a - b);
    for (let k = 0; k < fresh.length; k += CHUNK_TASKS) {
      // The lowest accepted copy of each task stands for them (outputsAt).
      for (const out of await outputsAt(market.resources.database.reads, jobId, fresh.slice(k, k + CHUNK_TASKS))) {
        sent.add(out.index);
        for (; sent.has(prefix); prefix++) sent.delete(prefix);
        yield tracked(String(prefix), { kind: "output", output: outputView(out) } satisfies OutputEvent);
      }
    }
    if (status !== null && FINAL.has(status)) {
      yield tracked(String(prefix), { kind: "end", status } satisfies OutputEvent);
      return;
    }
  }
}

/**
 * A split job's outputs (tasks/split-view.ts), the same events as jobResults: each part's accepted
 * outputs with their indices in the whole, looked for every SPLIT_LOOK_MS (its parts' managers may
 * be others), then `end` once every part has ended and all were sent.
 */
async function* wholeResults(market: Market, jobId: string, from: number, signal: AbortSignal | undefined) {
  let prefix = from;
  const sent = new Set<number>();
  for await (const _ of changes(market, signal, { only: ofJob(jobId), minGapMs: RESULTS_MIN_GAP_MS, everyMs: SPLIT_LOOK_MS })) {
    // The status first: parts that had ended by then had accepted all they ever will, read below.
    const parts = (await partsOf(market.db, [jobId])).get(jobId)!;
    const status = wholeStatus(parts);
    for (let page = await wholeOutputs(market.resources.database.reads, parts, prefix, CHUNK_TASKS); page.length; ) {
      const fresh = page.filter((o) => !sent.has(o.index));
      for (const output of fresh) {
        sent.add(output.index);
        for (; sent.has(prefix); prefix++) sent.delete(prefix);
        yield tracked(String(prefix), { kind: "output", output } satisfies OutputEvent);
      }
      const next = page[page.length - 1]!.index + 1;
      page = await wholeOutputs(market.resources.database.reads, parts, next, CHUNK_TASKS);
    }
    if (FINAL.has(status)) {
      yield tracked(String(prefix), { kind: "end", status } satisfies OutputEvent);
      return;
    }
  }
}
