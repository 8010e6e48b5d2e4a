import type { Market } from "./market.ts";
import type { ManagerView } from "./managers.ts";
import { FORWARDED_HEADER, type Context } from "../api/trpc.ts";
import { Refusal } from "../api/errors.ts";

// Consumers shop among the managers (the Java Market paper, section 4.4: a consumer may deliver a
// job to any scheduler, or shop among them for the lowest price). A quote commits nothing, so the
// manager a consumer reaches asks every other live manager for its own quote of the same job, in
// parallel and for at most MARKET_QUOTE_SHOP_TIMEOUT_MS, and answers the best offer with the
// manager that made it. A submission naming that manager is sent there, on the caller's own
// credentials, and the job is that manager's.

/** The body of a call as the caller sent it: the JSON of its input, or the text of the bytes held for an intake thread. */
export interface RawCall {
  body: string;
  batch: boolean;
}

/**
 * The raw input of a call, kept for sending it on, taken before the procedure reads it: held bytes
 * are read as text (an intake thread is handed the originals), or the input the adapter read. Null when
 * this manager is the market's only live one, or the call was itself sent by another manager.
 */
export async function keepRawCall(market: Market, ctx: Context, getRawInput: () => Promise<unknown>): Promise<RawCall | null> {
  if (ctx.credentials?.forwarded || (market.managers?.alive().length ?? 0) < 2) return null;
  if (ctx.heldBody) return { body: Buffer.from(ctx.heldBody.bytes).toString("utf8"), batch: ctx.heldBody.batch };
  return { body: JSON.stringify((await getRawInput()) ?? null), batch: false };
}

/**
 * A submission's raw input, kept only when it may name another manager: a submission that names
 * none (most of them) is not copied. A small body read by the adapter says so itself; a big one,
 * held for an intake thread unparsed, is kept when its bytes hold the field's name at all.
 */
export async function keepRawSubmission(market: Market, ctx: Context, getRawInput: () => Promise<unknown>): Promise<RawCall | null> {
  if (ctx.credentials?.forwarded || (market.managers?.alive().length ?? 0) < 2) return null;
  if (ctx.heldBody) return Buffer.from(ctx.heldBody.bytes.buffer, ctx.heldBody.bytes.byteOffset, ctx.heldBody.bytes.byteLength).includes('"manager"') ? keepRawCall(market, ctx, getRawInput) : null;
  const raw = (await getRawInput()) as { manager?: unknown } | null;
  const named = raw?.manager;
  const split = (raw as { split?: unknown } | null)?.split !== undefined;
  return split || (typeof named === "string" && named !== market.managerId) ? { body: JSON.stringify(raw), batch: false } : null;
}

interface ErrorShape {
  message?: string;
  data?: { code?: string; httpStatus?: number; reason?: unknown };
}

/** What a manager answered a call sent on: its data, or its error's shape (code, message, reason). */
type Answer = { ok: true; data: unknown } | { ok: false; error: ErrorShape };

/** How long a submission sent to the manager that quoted may take there. */
export const SEND_SUBMISSION_TIMEOUT_MS = 120_000;

/** Sends `procedure` to another manager with the caller's credentials, marked as sent by this one; bounded by `timeoutMs`. */
export async function callManager(market: Market, to: ManagerView, procedure: string, call: RawCall, ctx: Context, timeoutMs: number): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json", [FORWARDED_HEADER]: market.managerId };
  if (ctx.credentials?.authorization) headers.authorization = ctx.credentials.authorization;
  if (ctx.credentials?.cookie) headers.cookie = ctx.credentials.cookie;
  const res = await fetch(`${to.url.replace(/\/+$/, "")}/api/trpc/${procedure}${call.batch ? "?batch=1" : ""}`, {
    method: "POST",
    headers,
    body: call.body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json = (await res.json()) as unknown;
  const one = (call.batch ? (json as unknown[])[0] : json) as { result?: { data?: unknown }; error?: ErrorShape } | undefined;
  if (one?.result) return { ok: true, data: one.result.data };
  return { ok: false, error: one?.error ?? {} };
}

/** Each manager's quote: its outcome and price (credits), for the consumer to see what was compared. */
export interface Offer {
  manager: string;
  outcome: "admitted" | "delayed" | "rejected";
  price: number | null;
  /** How many of the job's tasks it can start now (market/job-split.ts roomOf). */
  room?: number;
}

interface Quote {
  outcome: "admitted" | "delayed" | "rejected";
  price?: number;
  room?: number;
}

/** Admitted before delayed before rejected; among the admitted, the lowest price; a tie stays with the first (this manager). */
function better(a: Quote, b: Quote): boolean {
  const rank = { admitted: 0, delayed: 1, rejected: 2 } as const;
  if (rank[a.outcome] !== rank[b.outcome]) return rank[a.outcome] < rank[b.outcome];
  return a.outcome === "admitted" && (a.price ?? Infinity) < (b.price ?? Infinity);
}

/**
 * The best of this manager's quote and the other live managers', each marked with its manager;
 * with several managers the answer lists every offer compared. A manager that refuses the call,
 * fails or does not answer within the timeout is left out.
 */
export async function shopQuote<Q extends Quote>(market: Market, ctx: Context, local: Q, raw: RawCall | null, timeoutMs: number): Promise<Q & { manager: string; offers?: Offer[] }> {
  const managers = market.managers;
  const self = market.managerId;
  const others = managers && raw ? managers.alive().filter((m) => m.id !== self) : [];
  if (!raw || !others.length) return { ...local, manager: self };
  const answers = await Promise.all(
    others.map(async (m) => {
      try {
        const a = await callManager(market, m, "jobs.quoteHere", raw, ctx, timeoutMs);
        return a.ok ? { manager: m.id, quote: a.data as Q } : null;
      } catch {
        return null;
      }
    }),
  );
  let best: { manager: string; quote: Q } = { manager: self, quote: local };
  const offers: Offer[] = [offerOf(self, local)];
  for (const a of answers) {
    if (!a || !a.quote || typeof a.quote !== "object") continue;
    offers.push(offerOf(a.manager, a.quote));
    if (better(a.quote, best.quote)) best = a;
  }
  return { ...best.quote, manager: best.manager, ...(offers.length > 1 ? { offers } : {}) };
}

const offerOf = (manager: string, q: Quote): Offer => ({
  manager,
  outcome: q.outcome,
  price: q.outcome === "admitted" ? (q.price ?? null) : null,
  ...(typeof q.room === "number" ? { room: q.room } : {}),
});

/**
 * A submission naming another live manager (the one whose quote the consumer took) is sent there
 * and its answer returned as this manager's: the job is that manager's. Null: this manager takes
 * it (it is the one named, none is named, the one named is not live, or the call was itself sent
 * on by another manager).
 */
export async function sendSubmission(market: Market, ctx: Context, named: string | undefined, raw: RawCall | null): Promise<unknown> {
  const managers = market.managers;
  if (!named || !managers || !raw || named === market.managerId) return null;
  const to = managers.alive().find((m) => m.id === named);
  if (!to) return null;
  return answerOf(await callManager(market, to, "jobs.submit", raw, ctx, SEND_SUBMISSION_TIMEOUT_MS), named, "The Market Manager that quoted refused the job.");
}

/**
 * A consumer's cancel of a job another live manager holds (a quote sent its submission there, and
 * the web app reaches this one) is sent to that manager, which alone stops and settles it: its
 * answer is returned as this manager's. Null: this manager holds the job, the holder is not live
 * (a takeover brings the job here), or the call was itself sent on by another manager.
 */
export async function sendCancel(market: Market, ctx: Context, jobId: string): Promise<unknown> {
  const managers = market.managers;
  if (!managers || ctx.credentials?.forwarded || market.state.jobs.has(jobId) || market.resources.endings.has(jobId)) return null;
  const row = await market.db.job.findUnique({ where: { id: jobId }, select: { managerId: true } });
  if (!row?.managerId || row.managerId === market.managerId) return null;
  const to = managers.alive().find((m) => m.id === row.managerId);
  if (!to) return null;
  const call = { body: JSON.stringify({ jobId }), batch: false };
  return answerOf(await callManager(market, to, "jobs.cancel", call, ctx, SEND_SUBMISSION_TIMEOUT_MS), to.id, "The Market Manager that holds the job refused to cancel it.");
}

/** Another manager's answer as this one's: its data, or its refusal thrown again with its reason. */
function answerOf(answer: Answer, managerId: string, refused: string): unknown {
  if (answer.ok) return answer.data;
  const { error } = answer;
  const reason = error.data?.reason as ConstructorParameters<typeof Refusal>[1] | undefined;
  const code = (error.data?.code ?? "CONFLICT") as ConstructorParameters<typeof Refusal>[0];
  if (reason) throw new Refusal(code, reason, error.message ?? refused);
  throw new Error(`the Market Manager ${managerId} did not answer the call: ${error.message ?? "no answer"}`);
}
