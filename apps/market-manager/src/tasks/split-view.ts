import type { Db, Prepared } from "../db/client.ts";
import type { Market } from "../market/market.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { acceptedStdouts } from "../db/sql/job-outputs.ts";
import { combineOutputs } from "./examples.ts";
import { acceptedOutputs, credits, jobOutputs, jobSummaries, jobView, outputView } from "./views.ts";
import { jobProgress } from "./progress.ts";

// A job split across Market Managers (market/job-split.ts) as its consumer sees it: one job. Its
// row (status `split`) holds no tasks; each part is a job of its own, owned, placed and settled by
// its manager, its tasks numbered from 0 and `taskOffset` where they start in the whole. Progress,
// spend and outputs are the parts', read from PostgreSQL whichever manager holds them, task
// indices shifted back into the whole.

/** A part as the whole's views read it. */
export interface PartRow {
  id: string;
  managerId: string | null;
  taskOffset: number;
  taskCount: number;
  tasksDone: number;
  status: string;
  quotedPriceMicro: bigint | null;
  chargedMicro: bigint | null;
  completedAt: Date | null;
}

const partFields = { id: true, partOf: true, managerId: true, taskOffset: true, taskCount: true, tasksDone: true, status: true, quotedPriceMicro: true, chargedMicro: true, completedAt: true } as const;

/** The parts of each split job named, in task order. */
export async function partsOf(db: Db, wholeIds: string[]): Promise<Map<string, PartRow[]>> {
  const byWhole = new Map<string, PartRow[]>(wholeIds.map((id) => [id, []]));
  if (!wholeIds.length) return byWhole;
  const rows = await db.job.findMany({ where: { partOf: { in: wholeIds } }, orderBy: { taskOffset: "asc" }, select: partFields });
  for (const { partOf, ...r } of rows) byWhole.get(partOf!)?.push(r);
  return byWhole;
}

const OPEN = new Set(["admitted", "running", "delayed"]);

/**
 * The whole's status from its parts': running while any part runs (admitted until one does),
 * completed once all completed; else ended as its worst part did (failed, cancelled, rejected).
 * A whole whose parts are still being submitted is admitted.
 */
export function wholeStatus(parts: PartRow[]): "admitted" | "running" | "completed" | "failed" | "cancelled" | "rejected" {
  if (!parts.length) return "admitted";
  if (parts.some((p) => OPEN.has(p.status))) return parts.some((p) => p.status === "running" || p.tasksDone > 0) ? "running" : "admitted";
  if (parts.every((p) => p.status === "completed")) return "completed";
  for (const s of ["failed", "cancelled", "rejected"] as const) if (parts.some((p) => p.status === s)) return s;
  return "failed";
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/** What the consumer is charged for the whole: the sum of its parts' settlements, once all are settled. */
export function wholeCharged(parts: PartRow[]): bigint | null {
  return parts.length && parts.every((p) => p.chargedMicro !== null) ? sum(parts.map((p) => p.chargedMicro!)) : null;
}

/** A whole's parts as its page lists them: which manager runs which tasks, and how far each is. */
export const partViews = (parts: PartRow[]) =>
  parts.map((p) => ({
    jobId: p.id,
    manager: p.managerId,
    fromTask: p.taskOffset,
    tasks: p.taskCount,
    status: p.status,
    tasksDone: p.tasksDone,
    quotedPrice: credits(p.quotedPriceMicro),
    charged: credits(p.chargedMicro),
  }));

/** A split job in a job list: the whole's row with its parts' progress and spend. */
export function wholeSummary<S extends { status: string; tasksDone: number; completedAt: number | null; charged: number | null }>(row: S, parts: PartRow[]): S {
  const status = wholeStatus(parts);
  const done = parts.map((p) => p.completedAt?.getTime() ?? 0);
  return {
    ...row,
    status,
    tasksDone: parts.reduce((n, p) => n + p.tasksDone, 0),
    completedAt: status === "completed" ? Math.max(...done) : null,
    charged: credits(wholeCharged(parts)),
  };
}

type JobView = Awaited<ReturnType<typeof jobView>>;

/**
 * A split job's page: its own row (name, benefit, the quote) with the parts' pages summed: task
 * counts, what is paid, held and charged; the machines and failed runs of all, with task indices
 * in the whole; an example's result combined from every part's outputs in task order.
 */
export async function wholeView(market: Market, whole: JobView, parts: PartRow[]): Promise<JobView & { parts: ReturnType<typeof partViews> }> {
  const views = await Promise.all(parts.map((p) => jobView(market, p.id)));
  const status = wholeStatus(parts);
  const add = (f: (v: JobView) => number | null) => views.reduce((n, v) => n + (f(v) ?? 0), 0);
  const charged = wholeCharged(parts);
  const ended = views.filter((v) => v.estimate === null);
  const estimates = views.map((v) => v.estimate).filter((e) => e !== null);
  return {
    ...whole,
    status,
    tasksDone: add((v) => v.tasksDone),
    tasks: {
      pending: add((v) => v.tasks.pending),
      queued: add((v) => v.tasks.queued),
      leased: add((v) => v.tasks.leased),
      done: add((v) => v.tasks.done),
      failed: add((v) => v.tasks.failed),
    },
    expectedCompletionAt: views.length ? Math.max(...views.map((v) => v.expectedCompletionAt ?? 0)) : whole.expectedCompletionAt,
    completedAt: status === "completed" ? Math.max(...views.map((v) => v.completedAt ?? 0)) : null,
    charged: credits(charged),
    maxSpend: add((v) => v.maxSpend),
    chargeReasons: views.flatMap((v) => v.chargeReasons),
    escrowHeld: add((v) => v.escrowHeld),
    waiting: { total: add((v) => v.waiting.total), reasons: views.flatMap((v) => v.waiting.reasons) },
    result: status === "completed" ? await wholeResult(market.db, whole.example, parts) : null,
    failure: views.map((v) => v.failure).find((f) => f !== null) ?? null,
    machines: views.flatMap((v) => v.machines),
    failures: {
      tasks: views.flatMap((v, i) => v.failures.tasks.map((t) => ({ ...t, taskIndex: t.taskIndex + parts[i]!.taskOffset }))),
      failureLimit: whole.failures.failureLimit,
    },
    estimate:
      estimates.length && ended.length < views.length
        ? {
            completionAt: Math.max(...estimates.map((e) => e.completionAt)),
            basis: estimates.every((e) => e.basis === "measured-pace") ? "measured-pace" : "plan",
            chargeIfNow: estimates.reduce((n, e) => n + e.chargeIfNow, 0) + views.filter((v) => v.estimate === null).reduce((n, v) => n + (v.charged ?? 0), 0),
            paidToProducers: estimates.reduce((n, e) => n + e.paidToProducers, 0),
          }
        : null,
    givesUpAt: null,
    parts: partViews(parts),
  };
}

/** A completed whole's result: an example's answer combined from every part's outputs in task order. */
async function wholeResult(db: Db, example: string | null, parts: PartRow[]) {
  const texts: string[] = [];
  for (const p of parts) {
    const rows = await runStatement(viaPrisma(db), acceptedStdouts, { jobId: p.id });
    texts.push(...rows.map((o) => (o.stdout ? Buffer.from(o.stdout).toString("utf8") : "")));
  }
  return combineOutputs(example, texts);
}

/** The whole's accepted outputs from `fromIndex` on, in task order: each part's, its indices shifted into the whole. */
export async function wholeOutputs(reads: Prepared, parts: PartRow[], fromIndex: number, limit: number) {
  const out: ReturnType<typeof outputView>[] = [];
  for (const p of parts) {
    if (out.length >= limit) break;
    if (p.taskOffset + p.taskCount <= fromIndex) continue;
    const rows = await acceptedOutputs(reads, p.id, Math.max(0, fromIndex - p.taskOffset), limit - out.length);
    out.push(...rows.map((r) => outputView({ ...r, index: r.index + p.taskOffset })));
  }
  return out;
}

/** The whole's progress chart: every part's tasks done, in seconds after the whole arrived. */
export async function wholeProgress(reads: Prepared, wholeId: string, parts: PartRow[]) {
  const whole = await jobProgress(reads, wholeId);
  const each = await Promise.all(parts.map((p) => jobProgress(reads, p.id)));
  const shift = (p: (typeof each)[number]) => (p.arrivedAt - whole.arrivedAt) / 1000;
  const status = wholeStatus(parts);
  const completed = each.map((p) => (p.completed === null ? null : p.completed + shift(p)));
  return {
    ...whole,
    status,
    doneAt: each.flatMap((p) => p.doneAt.map((t) => t + shift(p))).sort((a, b) => a - b),
    expectedCompletion: Math.max(...each.map((p) => (p.expectedCompletion ?? 0) + shift(p))),
    completed: status === "completed" ? Math.max(...completed.map((c) => c ?? 0)) : null,
  };
}

/** The consumer's jobs: a split job once, as its whole, its parts not listed on their own. */
export async function jobList(db: Db, ownerId: string) {
  const rows = await jobSummaries(db, { ownerId, partOf: null });
  const wholes = await partsOf(db, rows.filter((r) => r.status === "split").map((r) => r.id));
  return rows.map((r) => (wholes.has(r.id) ? wholeSummary(r, wholes.get(r.id)!) : r));
}

/** A job's page, or a split job's as one job with its parts (wholeView). */
export async function jobPage(market: Market, jobId: string): Promise<JobView & { parts?: ReturnType<typeof partViews> }> {
  const view = await jobView(market, jobId);
  if (view.status !== "split") return view;
  return wholeView(market, view, (await partsOf(market.db, [jobId])).get(jobId)!);
}

/**
 * The parts of a split job, or null for a job of its own. A job live in this manager's memory is
 * its own (a split whole is never admitted): the pages' polls of a running job read nothing more.
 */
export async function splitParts(db: Db, jobId: string, market?: Market): Promise<PartRow[] | null> {
  if (market?.state.jobs.has(jobId)) return null;
  const row = await db.job.findUnique({ where: { id: jobId }, select: { status: true } });
  return row?.status === "split" ? (await partsOf(db, [jobId])).get(jobId)! : null;
}

/** A job's accepted outputs by task index, a split job's from the part that holds each index. */
export async function outputsOf(market: Market, jobId: string, fromIndex: number, limit: number) {
  const reads = market.resources.database.reads;
  const parts = await splitParts(market.db, jobId, market);
  return parts ? wholeOutputs(reads, parts, fromIndex, limit) : jobOutputs(reads, jobId, fromIndex, limit);
}

/** A job's progress chart, a split job's from all its parts. */
export async function progressOf(market: Market, jobId: string) {
  const reads = market.resources.database.reads;
  const parts = await splitParts(market.db, jobId, market);
  return parts?.length ? wholeProgress(reads, jobId, parts) : jobProgress(reads, jobId);
}
