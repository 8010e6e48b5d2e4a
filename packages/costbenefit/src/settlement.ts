// The market's money rules: what a producer's run is worth, what a consumer is charged, what a
// dedicated machine has earned. Pure, like the rest of the engine: the Market Manager applies
// these answers to the ledger and never works money out on its own. Floats in credits here; the
// service rounds once, when they become micro-credits.
//
// One principle runs through them: the market pays only for what it can vouch for. A producer's
// reported run time, a consumer's work estimate and a machine's claim to be present are claims;
// the machine's benchmarked speed, the job's escrow and heartbeats the market heard are facts.
import { z } from "zod";

const nonNegative = z.number().refine((v) => Number.isFinite(v) && v >= 0, { message: "must be a finite number, at least 0" });

export const SettlementTerms = z.object({
  /**
   * A run is paid for at most this many times the seconds the market expects it to take on the
   * machine that ran it (the job's work per task over the machine's benchmarked speed). Browsers
   * share their cores with their owners, so an honest run can take a few times its estimate.
   */
  payCapMultiple: z.number().min(1).max(100).default(4),
  /**
   * Expectations below this are mostly start-up and noise, so every run may be paid for at least
   * this many seconds (still within the task's wall-time limit).
   */
  payFloorSeconds: nonNegative.default(2),
  /**
   * The consumer's work estimate counts as contradicted when the work measured on the market's
   * machines is more than this many times what they declared; lateness is then the consumer's own.
   */
  estimateToleranceMultiple: z.number().min(1).max(1000).default(2),
});
export type SettlementTerms = z.infer<typeof SettlementTerms>;
export type SettlementTermsInput = z.input<typeof SettlementTerms>;
export const DEFAULT_TERMS: SettlementTerms = SettlementTerms.parse({});

export interface RunPayInput {
  /** What the producer says the run took (any number: it is a claim). */
  reportedSeconds: number;
  /** The job's current work per task, in speed-1 seconds. */
  workPerTask: number;
  /** The machine's benchmarked speed per slot, never raised by its own reports. */
  speed: number;
  /** cps(m), credits per second. */
  pricePerSecond: number;
  /** The task's wall-time limit: no run can honestly take longer. */
  wallSeconds: number;
  /** Credits left in the job's escrow for producers. */
  escrowLeft: number;
}

export type RunPay = {
  paidSeconds: number;
  amount: number;
  expectedSeconds: number;
  capSeconds: number;
  /** The report claimed more time than the machine's speed allows: paid at the cap, reputation falls. */
  implausible: boolean;
  /** The escrow could not cover the run in full: the job stops being placed. */
  escrowExhausted: boolean;
};

/**
 * seed 003, 5.5.2 pays an opportunistic machine cps(m) per second of use; here the seconds are
 * the ones the market can vouch for: the report, but never past `payCapMultiple` times the
 * expectation on that machine (at least `payFloorSeconds`), nor past the wall-time limit, and
 * never more than the job's escrow holds. Failed runs are paid by the same rule.
 */
export function runPay(t: SettlementTerms, r: RunPayInput): RunPay {
  const reported = Number.isFinite(r.reportedSeconds) && r.reportedSeconds > 0 ? r.reportedSeconds : 0;
  const speed = r.speed > 0 ? r.speed : 1;
  const expectedSeconds = Math.max(0, r.workPerTask) / speed;
  const capSeconds = Math.min(Math.max(0, r.wallSeconds), Math.max(t.payFloorSeconds, t.payCapMultiple * expectedSeconds));
  const paidSeconds = Math.min(reported, capSeconds);
  const owed = paidSeconds * Math.max(0, r.pricePerSecond);
  const left = Math.max(0, r.escrowLeft);
  return {
    paidSeconds,
    amount: Math.min(owed, left),
    expectedSeconds,
    capSeconds,
    implausible: reported > capSeconds,
    escrowExhausted: owed > left,
  };
}

/**
 * A measured run refines the job's work per task only as far as the market believes it: the
 * sample is the vouched seconds (capped as for pay) on the machine's benchmarked speed, so one
 * producer's inflated report moves the estimate by a bounded step, never to anything it likes.
 */
export function refinedWork(t: SettlementTerms, r: Omit<RunPayInput, "pricePerSecond" | "escrowLeft">, weight = 0.3): number {
  const pay = runPay(t, { ...r, pricePerSecond: 0, escrowLeft: 0 });
  const sample = pay.paidSeconds * (r.speed > 0 ? r.speed : 1);
  return (1 - weight) * r.workPerTask + weight * sample;
}

export interface ChargeInput {
  /** `posted`: the quoted price, at most b(j, t); `bid`: b(j, t) itself (seed 003, 4.2). */
  pricing: "posted" | "bid";
  /** b(j, t) at the job's actual completion. */
  benefit: number;
  /** The price quoted at admission; a penalty is never more than this. */
  price: number;
  /** What producers were paid out of this job's escrow (successful and failed runs alike). */
  paidToProducers: number;
  /** What the consumer put in escrow. */
  consumerEscrow: number;
  /** What the market set aside from its reserve for this job's penalty at admission. */
  penaltyHeld: number;
  /** Lateness the consumer caused (its work estimate was contradicted by the measurements). */
  consumerCausedLateness: boolean;
}

export interface Charge {
  /** Taken from the consumer's escrow; the rest of it goes back to them. */
  charge: number;
  /** Paid to the consumer out of the market's penalty hold (a service credit for lateness). */
  compensation: number;
  /** What the market keeps: charge less what producers were paid. Never negative. */
  marketIncome: number;
  reasons: ChargeReason[];
}

/** Why a job was charged what it was: part of the market's vocabulary (vocabulary.ts). */
export const ChargeReason = z.discriminatedUnion("code", [
  z.object({ code: z.literal("charged-price"), price: z.number(), benefit: z.number() }),
  z.object({ code: z.literal("charged-benefit"), benefit: z.number() }),
  z.object({ code: z.literal("charged-producer-time"), benefit: z.number(), paidToProducers: z.number() }),
  z.object({ code: z.literal("penalty-paid"), penalty: z.number(), cap: z.number() }),
  z.object({ code: z.literal("penalty-void"), penalty: z.number(), why: z.literal("estimate-contradicted") }),
]);
export type ChargeReason = z.infer<typeof ChargeReason>;

/**
 * Settlement of a completed job. Posted pricing: the consumer pays the price quoted at admission,
 * or b(j, t) when the market finished later than it promised and the benefit fell below the
 * quote. Bid pricing (seed 003, 4.2): b(j, t). Either way never less than the producer time the
 * job used (already paid out of its escrow, so the market never pays for a consumer's work from
 * its own pocket) and never more than the escrow. A negative b(j, t) is a service credit from the
 * market, bounded by the job's price and by what the market set aside for it, and void when the
 * consumer caused the lateness.
 */
export function settleCharge(c: ChargeInput): Charge {
  const reasons: ChargeReason[] = [];
  const paid = Math.max(0, c.paidToProducers);
  const escrow = Math.max(0, c.consumerEscrow);
  const benefit = Math.max(0, c.benefit);
  const due = c.pricing === "posted" ? Math.min(Math.max(0, c.price), benefit) : benefit;
  // Producers were paid out of this escrow, so it always covers what they were paid.
  const charge = Math.min(escrow, Math.max(due, paid));
  if (due < paid) reasons.push({ code: "charged-producer-time", benefit: c.benefit, paidToProducers: paid });
  else if (c.pricing === "posted") reasons.push({ code: "charged-price", price: c.price, benefit: c.benefit });
  else reasons.push({ code: "charged-benefit", benefit: c.benefit });
  let compensation = 0;
  if (c.benefit < 0) {
    const cap = Math.max(0, Math.min(c.price, c.penaltyHeld));
    if (c.consumerCausedLateness) reasons.push({ code: "penalty-void", penalty: -c.benefit, why: "estimate-contradicted" });
    else {
      compensation = Math.min(-c.benefit, cap);
      reasons.push({ code: "penalty-paid", penalty: -c.benefit, cap });
    }
  }
  return { charge, compensation, marketIncome: charge - Math.min(paid, escrow), reasons };
}

/** What the market sets aside at admission for a job whose curve can go negative: at most its price. */
export function penaltyHold(minBenefit: number, price: number): number {
  return minBenefit < 0 ? Math.min(-minBenefit, Math.max(0, price)) : 0;
}

/** The consumer's estimate is contradicted when the measured work is well over what they declared. */
export function estimateContradicted(t: SettlementTerms, declaredWork: number, measuredWork: number): boolean {
  return measuredWork > t.estimateToleranceMultiple * Math.max(declaredWork, 0);
}

export interface ContractAccrualInput {
  /** c(m) for the whole contract. */
  contractPrice: number;
  /** When the contract started and when the machine leaves (dp(m)), seconds. */
  startAt: number;
  departsAt: number;
  /** Up to when the machine has been paid already. */
  paidUntil: number;
  /**
   * The last moment the market heard the machine (its last heartbeat). A machine silent for the
   * lease timeout has departed, so up to here its presence is vouched for.
   */
  presentUntil: number;
}

/**
 * A dedicated machine is paid as its capacity is delivered (seed 003, 5.5.2 prices the whole
 * contract; paying it all on acceptance let a machine take the money and leave at once): the
 * share of c(m) for the time from `paidUntil` to its last heartbeat, within the contract. What a
 * machine that leaves early never delivered is never paid.
 */
export function contractAccrual(a: ContractAccrualInput): { amount: number; paidUntil: number } {
  const length = a.departsAt - a.startAt;
  const from = Math.max(a.paidUntil, a.startAt);
  const to = Math.min(a.presentUntil, a.departsAt);
  if (!(length > 0) || !(a.contractPrice > 0) || !(to > from)) return { amount: 0, paidUntil: Math.max(from, a.paidUntil) };
  return { amount: (a.contractPrice * (to - from)) / length, paidUntil: to };
}
