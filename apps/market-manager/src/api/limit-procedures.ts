import type { Market } from "../market/market.ts";
import { refuse } from "./errors.ts";
import { tasksInIntake } from "../tasks/intake.ts";
import type { Prepared } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { prepared } from "../db/sql/runners.ts";
import { queuedTasksElsewhere } from "../db/sql/consumer-spending.ts";

// The quotas as tRPC middleware: a refusal names the limit and when to retry, and the HTTP
// layer turns `retryAfterSeconds` into a 429 with Retry-After (http/server.ts).

/** Calls per user per minute (quotes, submissions); null from `hit` means the call may go ahead. */
export function perMinute(limit: "quotes-per-minute" | "submissions-per-minute", max: number, retryAfterSeconds: number | null) {
  if (retryAfterSeconds === null) return;
  const what = limit === "quotes-per-minute" ? "quotes" : "job submissions";
  throw refuse.tooMany(
    { code: "limit-reached", limit, max, retryAfterSeconds },
    `At most ${max} ${what} a minute; try again in ${retryAfterSeconds} s.`,
  );
}

/** Tasks (every copy) of the user's jobs still to run, delayed jobs and jobs being taken in included. */
export function queuedTasks(market: Market, userId: string): number {
  let n = tasksInIntake(market, userId);
  for (const job of market.state.jobs.values()) if (job.ownerId === userId) n += Math.max(0, job.taskCount - job.tasksDone) * job.replicas;
  return n;
}

/**
 * Refuses a job that would take the user's queue past its quota. With several Market Managers the
 * quota is the user's across all of them: the others' jobs are read from the database (a job being
 * taken in at another manager at this moment is not yet there, so at most one submission a
 * manager can pass the quota).
 */
export async function checkQueuedTasks(market: Market, reads: Prepared, userId: string, adding: number, max: number) {
  let queued = queuedTasks(market, userId);
  if (queued + adding <= max) {
    if (!market.managers || market.managers.alive().length < 2) return;
    const [row] = await runStatement(prepared(reads), queuedTasksElsewhere, { consumerId: userId, managerId: market.managerId });
    queued += row!.queued;
    if (queued + adding <= max) return;
  }
  throw refuse.tooMany(
    // No clock says when tasks finish; a minute is a fair first wait.
    { code: "limit-reached", limit: "queued-tasks-per-user", max, queued, adding, retryAfterSeconds: 60 },
    `At most ${max} of your tasks may wait in the market; ${queued} do and this job adds ${adding}.`,
  );
}

/**
 * Holds one of the streams a key may open (per user, per machine) while the stream is open: the
 * place is given back when the stream ends by itself or its client goes away.
 */
export async function holdStream<T extends { ok: boolean }>(
  take: () => (() => void) | null,
  refusal: () => Error,
  signal: AbortSignal | undefined,
  next: () => Promise<T>,
): Promise<T> {
  const release = take();
  if (!release) throw refusal();
  signal?.addEventListener("abort", release, { once: true });
  let result: T;
  try {
    result = await next();
  } catch (e) {
    release();
    throw e;
  }
  const data = (result as { data?: unknown }).data;
  if (!result.ok || !data || typeof (data as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") {
    release();
    return result;
  }
  const inner = data as AsyncIterable<unknown>;
  return {
    ...result,
    data: (async function* () {
      try {
        return yield* inner;
      } finally {
        release();
      }
    })(),
  };
}
