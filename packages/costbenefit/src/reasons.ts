// Reasons are data: a code and the numbers behind it. Words are rendered at the edge (UI, logs).
import { z } from "zod";

const num = z.number();

/** Why machines were ruled out for one task: counts per feasibility check. */
export const Exclusions = z.object({
  /** Machines the search looked at one by one (the others were ruled out, or outbid, by groups). */
  inspected: num,
  /** Machines whose producer has switched their capacity off (paused, schedule, in use). */
  unavailable: num.default(0),
  memory: num,
  reputation: num,
  replica: num,
  departure: num,
  deadline: num,
  horizon: num,
  memoryFull: num,
}).strict();
export type Exclusions = z.infer<typeof Exclusions>;

// Why a dedicated machine's offer was refused (purchase.ts); the service's `offer-refused` carries one.
const OFFER_REFUSALS = [
  z.object({ code: z.literal("offer-too-expensive"), contractPrice: num, value: num, capacityWork: num, unitPrice: num }).strict(),
  z.object({ code: z.literal("offer-expired"), departureAt: num, now: num }).strict(),
  z.object({ code: z.literal("offer-unaffordable"), contractPrice: num, budget: num }).strict(),
  // What the market may promise one account in contracts grows with what it proved (contractCeiling).
  z.object({ code: z.literal("offer-over-standing"), contractPrice: num, ceiling: num, promised: num }).strict(),
] as const;
export const OfferRefusal = z.discriminatedUnion("code", OFFER_REFUSALS);
export type OfferRefusal = z.infer<typeof OfferRefusal>;

export const Reason = z.discriminatedUnion("code", [
  z.object({ code: z.literal("profitable"), benefit: num, marginalCost: num, profit: num, completionAt: num, candidates: num }).strict(),
  // benefitNeeded: the smallest benefit at completionAt that the market would admit now.
  z.object({ code: z.literal("unprofitable"), benefit: num, marginalCost: num, completionAt: num, benefitNeeded: num.optional() }).strict(),
  z.object({ code: z.literal("always-admit"), benefit: num, highestPossibleCost: num, marginalCost: num }).strict(),
  z.object({ code: z.literal("no-admission-control"), policy: z.string(), marginalCost: num }).strict(),
  z.object({ code: z.literal("no-feasible-machine"), taskId: z.string(), deadlineAt: num.nullable(), exclusions: Exclusions, linkFull: z.boolean() }).strict(),
  z.object({ code: z.literal("no-machines") }).strict(),
  z.object({ code: z.literal("cannot-become-profitable"), benefitAtEarliest: num, lowestPossibleCost: num, earliestCompletionAt: num }).strict(),
  z.object({ code: z.literal("max-wait-exceeded"), waitedSeconds: num, maxDelaySeconds: num }).strict(),
  // A job without a work estimate (pilots.ts): its first tasks run as pilots at an upper-bound
  // estimate, and the rest is planned from the work the pilots were measured to do.
  // `atMost`: what the pilots can cost the consumer (their price at the provisional work; null unless admitted).
  z.object({ code: z.literal("pilot-tasks"), pilots: num, tasks: num, provisionalWorkPerTask: num, wallSeconds: num, atMost: num.nullable() }).strict(),
  z.object({ code: z.literal("planned-from-pilots"), pilots: num, runs: num, measuredWorkPerTask: num, provisionalWorkPerTask: num }).strict(),
  z.object({ code: z.literal("capacity-changed"), sinceEpoch: num, epoch: num }).strict(),
  z.object({ code: z.literal("rebalance"), costBefore: num, costAfter: num, finishBefore: num, finishAfter: num }).strict(),
  z.object({ code: z.literal("load-balance"), loadBefore: num, loadAfter: num }).strict(),
  z.object({ code: z.literal("memory-ushering"), memoryUsedMb: num, memoryMaxMb: num }).strict(),
  // An idle slot took (or could not take) a task queued on another machine (policies/idle-take.ts).
  z.object({ code: z.literal("idle-take"), why: z.enum(["holder-may-not-run", "no-dearer", "dearer"]), takerAsk: num, holderAsk: num }).strict(),
  z.object({ code: z.literal("offer-accepted"), contractPrice: num, value: num, capacityWork: num, unitPrice: num }).strict(),
  ...OFFER_REFUSALS,
  // The share policies (the Millennium paper, 001, 002, 004): the job's derived terms and what they bought.
  z.object({ code: z.literal("tickets"), tickets: num, usagePerTicket: num, freeSlots: num }).strict(),
  z.object({ code: z.literal("waiting-for-slot"), freeSlots: num, jobsAhead: num }).strict(),
  z.object({ code: z.literal("over-p-max"), taskId: z.string(), runSeconds: num, pMaxSeconds: num }).strict(),
  z.object({ code: z.literal("least-usage-per-ticket"), jobId: z.string(), usagePerTicket: num, tickets: num }).strict(),
  z.object({ code: z.literal("opportunity-cost"), ratePerMinute: num, nodePricePerMinute: num, share: num, expectedCharge: num }).strict(),
  z.object({ code: z.literal("over-budget"), expectedCharge: num, budget: num }).strict(),
  z.object({ code: z.literal("continuous-bid"), budget: num, intervalSeconds: num, bidPerSecond: num, hostBidsPerSecond: num, share: num, expectedCharge: num }).strict(),
  z.object({ code: z.literal("rebid"), progressBefore: num, progressAfter: num }).strict(),
  z.object({ code: z.literal("reservation"), fraction: num, reservedFraction: num, bookableFraction: num }).strict(),
  z.object({ code: z.literal("reservations-full"), fraction: num, reservedFraction: num, bookableFraction: num }).strict(),
  z.object({ code: z.literal("reservation-unplaceable"), taskId: z.string(), ratePerSecond: num, largestSpare: num }).strict(),
]);
export type Reason = z.infer<typeof Reason>;
export type ReasonCode = Reason["code"];
