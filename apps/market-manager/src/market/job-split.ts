import { BenefitCurve, checkSplit, partBenefit, splitByRoom, type SplitPart } from "@cyclemarket/costbenefit";
import type { Market } from "./market.ts";
import { offering } from "./live.ts";
import type { Context } from "../api/trpc.ts";
import { refuse } from "../api/errors.ts";
import { callManager, SEND_SUBMISSION_TIMEOUT_MS, type RawCall } from "./shopping.ts";
import { toMicro } from "../ledger/ledger.ts";
import { toJson } from "../db/client.ts";
import { rowId } from "../db/row-id.ts";
import { storeWhole, type Submission } from "../tasks/jobs.ts";
import type { JobPart } from "../tasks/submission.ts";
import { shortId } from "@cyclemarket/client/job-file";

// A job larger than one Market Manager's machines, split by task ranges across managers (issue
// 47; the Java Market paper, section 4.4). The manager the consumer reached splits it in
// proportion to each manager's room (costbenefit splitByRoom), each part worth its share of the
// benefit curve (partBenefit), and quotes every part with its manager. Submitted, the whole is a
// job row of status `split` without tasks, and each part a job of its manager, admitted, held in
// escrow and settled there as any job is, linked to the whole (`partOf`, `taskOffset`): the
// consumer is charged the sum of the parts' settlements and sees one job (tasks/split-view.ts).
// Parts are submitted only once every one was quoted admitted; a part its manager then does not
// admit has the others cancelled (their escrow comes back by the cancel path), and the consumer
// gets one refusal.

/**
 * How much work this manager can start now: the free slots of the machines it offers work to,
 * each at its speed. Parts in proportion to it take about as long as each other.
 */
export function roomOf(market: Market): number {
  let room = 0;
  for (const m of market.state.machines.values()) if (offering(m)) room += Math.max(0, m.slots - m.leases.size - m.queue.length) * m.speed;
  return room;
}

/** A part as a quote offers it: its range, its manager and what that manager quoted. */
export interface QuotedPart extends SplitPart {
  price: number;
  completionAt: number;
}

interface PartQuote {
  outcome: "admitted" | "delayed" | "rejected";
  price?: number;
  completionAt?: number;
  reasons?: { code: string }[];
  /** What a submission would hold in escrow, and the balance it would be held of (credits). */
  escrow?: number;
  balance?: number;
}

/** The consumer's input as they sent it (the JSON of the call), to send each part on with its range. */
function inputOf(raw: RawCall): Record<string, unknown> {
  const body = JSON.parse(raw.body) as unknown;
  const input = raw.batch && body && typeof body === "object" ? (body as Record<string, unknown>)["0"] : body;
  return { ...(input as Record<string, unknown>) };
}

/** A part's call: the consumer's job with only the part's tasks and its share of the benefit. */
function partCall(input: Record<string, unknown>, taskCount: number, part: SplitPart, of?: string): RawCall {
  const { manager: _manager, split: _split, ...job } = input;
  const benefit = partBenefit(BenefitCurve.parse(job.benefit), part.tasks, taskCount);
  const range: JobPart = { fromTask: part.fromTask, tasks: part.tasks, ...(of ? { of } : {}) };
  // The most the consumer allows the whole to be charged, shared as the benefit is (to the micro-credit, down).
  const maxSpend = typeof job.maxSpend === "number" ? { maxSpend: Math.floor((job.maxSpend * part.tasks * 1e6) / taskCount) / 1e6 } : {};
  return { body: JSON.stringify({ ...job, benefit, ...maxSpend, part: range }), batch: false };
}

const liveManager = (market: Market, id: string) => market.managers?.alive().find((m) => m.id === id);

/** Each part quoted by its manager (null: it failed or did not answer in time). */
async function quoteParts(market: Market, ctx: Context, input: Record<string, unknown>, taskCount: number, parts: SplitPart[], timeoutMs: number) {
  return Promise.all(
    parts.map(async (p): Promise<PartQuote | null> => {
      const to = liveManager(market, p.manager);
      if (!to) return null;
      try {
        const a = await callManager(market, to, "jobs.quoteHere", partCall(input, taskCount, p), ctx, timeoutMs);
        return a.ok ? (a.data as PartQuote) : null;
      } catch {
        return null;
      }
    }),
  );
}

/** A part its manager did not admit, as the consumer is told (null: every part was admitted). */
function refusedPart(parts: SplitPart[], answers: (PartQuote | null)[]) {
  const i = answers.findIndex((a) => a?.outcome !== "admitted");
  if (i < 0) return null;
  const a = answers[i];
  const p = parts[i]!;
  return {
    code: "split-part-refused" as const,
    managerId: p.manager,
    fromTask: p.fromTask,
    tasks: p.tasks,
    outcome: a ? (a.outcome as "delayed" | "rejected") : ("failed" as const),
    partReasons: (a?.reasons ?? []).map((r) => ({ ...r })),
  };
}

/**
 * A split offer, when no manager admits the whole job now: its tasks split by the managers' room
 * (each manager's quote says its room), every part quoted admitted by its manager. The price is
 * the parts' sum, the completion the latest part's. Null when no split is possible or a part is
 * not admitted.
 */
export async function quoteSplit<Q extends object>(
  market: Market,
  ctx: Context,
  raw: RawCall,
  taskCount: number,
  rooms: { manager: string; room: number }[],
  timeoutMs: number,
): Promise<(Q & { manager: string; split: { parts: QuotedPart[] } }) | null> {
  const parts = splitByRoom(taskCount, rooms);
  if (!parts.length) return null;
  const input = inputOf(raw);
  const answers = await quoteParts(market, ctx, input, taskCount, parts, timeoutMs);
  if (refusedPart(parts, answers)) return null;
  const quoted: QuotedPart[] = parts.map((p, i) => ({ ...p, price: answers[i]!.price ?? 0, completionAt: answers[i]!.completionAt ?? 0 }));
  const first = answers[0]!;
  // Each part's quote checked the balance alone: together their escrows must fit in it too.
  const escrow = answers.reduce((s, a) => s + toMicro(a!.escrow ?? 0), 0n);
  if (first.balance !== undefined && escrow > toMicro(first.balance)) return null;
  // The first part's quote (its terms, its reasons) with the parts' price, escrow and completion.
  return {
    ...(first as unknown as Q),
    escrow: Number(escrow) / 1e6,
    price: quoted.reduce((s, p) => s + p.price, 0),
    completionAt: Math.max(...quoted.map((p) => p.completionAt)),
    priceParts: null,
    manager: market.managerId,
    split: { parts: quoted },
  };
}

/** What a submission answers: the job's id and its decision as the consumer is told it. */
interface Submitted {
  jobId: string;
  decision: PartQuote & Record<string, unknown>;
}

/**
 * A submission naming a split (the parts of a split quote): every part quoted again by its
 * manager, and only if all are admitted, the whole stored and every part submitted to its
 * manager with a link to it. Answers the whole's id and a decision whose price is the sum of the
 * parts' admitted prices; a part refused at either step refuses the whole, with the parts already
 * admitted cancelled.
 */
export async function submitSplit(market: Market, ctx: Context, submission: Submission, raw: RawCall, maxModuleBytes: number, timeoutMs: number) {
  const caller = ctx.caller!;
  const { head, job } = await storeWhole(market, caller.id, submission, maxModuleBytes);
  const parts = head.split!;
  const taskCount = job.tasks.length;
  const bad = checkSplit(taskCount, parts);
  if (bad) throw refuse.badRequest({ code: "invalid-input", issues: [{ path: ["split"], message: bad }] }, bad);
  const gone = parts.find((p) => !liveManager(market, p.manager));
  if (gone) throw refuse.conflict({ code: "manager-not-live", managerId: gone.manager }, `The Market Manager ${gone.manager} of a part is not live: quote the job again.`);
  const input = inputOf(raw);
  const quoted = await quoteParts(market, ctx, input, taskCount, parts, timeoutMs);
  const refusedAtQuote = refusedPart(parts, quoted);
  if (refusedAtQuote) throw refuse.conflict(refusedAtQuote, `The Market Manager ${refusedAtQuote.managerId} does not admit its part of the job now; nothing was submitted.`);

  const wholeId = rowId();
  const now = market.clock.now();
  const price = quoted.reduce((s, q) => s + toMicro(q!.price ?? 0), 0n);
  const completionAt = Math.max(...quoted.map((q) => q!.completionAt ?? 0));
  const decision = { outcome: "admitted", reasons: [], price: Number(price) / 1e6, completionAt, split: parts };
  await market.db.job.create({
    data: {
      id: wholeId,
      ownerId: caller.id,
      name: head.name,
      nameToProducers: head.nameToProducers,
      managerId: market.managerId,
      example: job.example,
      moduleHash: job.moduleHash,
      benefit: head.benefit,
      replicas: head.replicas,
      status: "split",
      decision: toJson(decision),
      taskCount,
      workPerTask: job.workPerTask ?? 0,
      declaredWorkPerTask: job.workPerTask ?? null,
      // Without the consumer's estimate each part runs its own pilots.
      ...(job.workPerTask === undefined ? { workEstimate: "provisional" } : {}),
      memoryMbPerTask: job.memoryMbPerTask,
      ...(job.taskLimits ? { taskLimits: toJson(job.taskLimits) } : {}),
      ...(head.maxSpend === undefined ? {} : { maxSpendMicro: toMicro(head.maxSpend) }),
      quotedPriceMicro: price,
      decidedAt: new Date(now),
      expectedCompletionAt: new Date(completionAt),
    },
  });
  // A part refused by its manager (insufficient credits once the other parts were held, say) is told as a rejection with the refusal's reason.
  const refusal = (reason: unknown): Submitted => ({ jobId: "", decision: { outcome: "rejected", reasons: reason && typeof reason === "object" ? [reason as { code: string }] : [] } });
  const results = await Promise.all(
    parts.map(async (p): Promise<Submitted | null> => {
      try {
        const a = await callManager(market, liveManager(market, p.manager)!, "jobs.submit", partCall(input, taskCount, p, wholeId), ctx, SEND_SUBMISSION_TIMEOUT_MS);
        return a.ok ? (a.data as Submitted) : refusal(a.error.data?.reason);
      } catch {
        return null;
      }
    }),
  );
  const answers = results.map((a) => (a?.jobId ? a : null));
  const refused = refusedPart(
    parts,
    results.map((a) => a?.decision ?? null),
  );
  if (!refused) {
    // The consumer is held to what its parts were admitted at, each charged up to its own: a
    // part's admission may price it above its quote of a moment before (another part, or another
    // job, admitted at its manager meanwhile), and the sum of the quotes would then promise less.
    const admitted = answers.map((a) => a!.decision);
    const priceMicro = admitted.reduce((s, d) => s + toMicro(d.price ?? 0), 0n);
    const admittedAt = Math.max(...admitted.map((d) => d.completionAt ?? 0));
    const told = { ...decision, price: Number(priceMicro) / 1e6, completionAt: admittedAt };
    await market.db.job.update({ where: { id: wholeId }, data: { quotedPriceMicro: priceMicro, expectedCompletionAt: new Date(admittedAt), decision: toJson(told) } });
    market.log(`job ${head.name} (${shortId(wholeId)}): split in ${parts.length} parts, ${parts.map((p) => `${p.manager} ${p.tasks}`).join(", ")}`);
    return { jobId: wholeId, decision: { ...admitted[0]!, price: told.price, completionAt: admittedAt, priceParts: null, split: parts.map((p, i) => ({ ...p, jobId: answers[i]!.jobId })) } };
  }
  await undoParts(market, ctx, wholeId, answers);
  await market.db.job.update({ where: { id: wholeId }, data: { status: "rejected", decision: toJson({ outcome: "rejected", reasons: [refused] }) } });
  throw refuse.conflict(refused, `The Market Manager ${refused.managerId} did not admit its part of the job; the other parts were cancelled and nothing is held.`);
}

/**
 * The parts of a whole that will not run: each open one cancelled by its manager (the cancel
 * path refunds what its escrow holds). A part whose submission got no answer may still have
 * been stored: the whole's parts are read back from PostgreSQL and those cancelled too.
 */
async function undoParts(market: Market, ctx: Context, wholeId: string, answers: (Submitted | null)[]) {
  const known = answers.filter((a): a is Submitted => a !== null).map((a) => a.jobId);
  const stored = await market.db.job.findMany({ where: { partOf: wholeId }, select: { id: true, managerId: true, status: true } });
  const open = stored.filter((p) => p.status === "admitted" || p.status === "running" || p.status === "delayed");
  for (const id of known) if (!stored.some((p) => p.id === id)) open.push({ id, managerId: null, status: "admitted" });
  await cancelEach(market, ctx, open);
}

/** Each job cancelled by the manager that holds it (its owner's call, sent on): what each was charged (null: not cancelled). */
async function cancelEach(market: Market, ctx: Context, jobs: { id: string; managerId: string | null }[]) {
  return Promise.all(
    jobs.map(async (j) => {
      const to = liveManager(market, j.managerId ?? market.managerId) ?? liveManager(market, market.managerId);
      if (!to) return null;
      const a = await callManager(market, to, "jobs.cancel", { body: JSON.stringify({ jobId: j.id }), batch: false }, ctx, SEND_SUBMISSION_TIMEOUT_MS).catch(() => null);
      return a?.ok ? ((a.data as { charged?: number }).charged ?? 0) : null;
    }),
  );
}

/** The consumer cancels a split job: every part still open is cancelled by its manager; charged what they were, summed. */
export async function cancelWhole(market: Market, ctx: Context, wholeId: string) {
  const parts = await market.db.job.findMany({ where: { partOf: wholeId, status: { in: ["admitted", "running", "delayed"] } }, select: { id: true, managerId: true } });
  if (!parts.length) throw refuse.conflict({ code: "job-finished", status: "ended" }, "Every part of this job has ended; there is nothing to cancel.");
  const charged = await cancelEach(market, ctx, parts);
  return { cancelled: charged.every((c) => c !== null), charged: charged.reduce<number>((s, c) => s + (c ?? 0), 0) };
}

/**
 * A part sent by the manager that split its job: the whole must be the caller's split job, and
 * the part within its tasks. Refused otherwise, before anything is stored.
 */
export async function checkPart(market: Market, ownerId: string, part: JobPart) {
  if (!part.of) return;
  const whole = await market.db.job.findUnique({ where: { id: part.of }, select: { ownerId: true, status: true, taskCount: true } });
  if (!whole || whole.ownerId !== ownerId || whole.status !== "split") throw refuse.notFound("job");
  if (part.fromTask + part.tasks > whole.taskCount) {
    const message = `The part's tasks ${part.fromTask} to ${part.fromTask + part.tasks - 1} are past the job's ${whole.taskCount} tasks.`;
    throw refuse.badRequest({ code: "invalid-input", issues: [{ path: ["part"], message }] }, message);
  }
}
