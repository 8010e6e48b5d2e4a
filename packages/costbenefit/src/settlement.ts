// The market's money rules: what a lease pays, when it ends, what a consumer is charged, who pays
// for lateness. Pure, like the rest of the engine: the Market Manager applies these answers to the
// ledger and never works money out on its own. Floats in credits here; the service rounds once,
// when they become micro-credits.
//
// One principle runs through them: every credit that moves is a function of what the market itself
// observed or fixed in advance (its own clock, the lease's piece rate, the quote, verified
// agreement), never of a number a participant sends. A producer's reported run time, a failure it
// reports and a consumer's work estimate are claims; the piece rate written on a lease, the
// market's clock between a lease and its report, results that other owners reproduced and the
// quote are facts.
import { z } from "zod";
import { benefitAt, type BenefitCurve } from "./benefit.ts";

const nonNegative = z.number().refine((v) => Number.isFinite(v) && v >= 0, { message: "must be a finite number, at least 0" });

export const SettlementTerms = z.object({
  /**
   * A lease lasts this many times the run time the market expects on the machine that holds it
   * (its work over the machine's speed, counting the runs queued ahead of it there); past that it
   * expires and its task is placed again, whatever heartbeats say.
   */
  leaseTimeFactor: z.number().min(1).max(100).default(3),
  /** Expectations below this are start-up and network: every lease lasts at least this long. */
  leaseFloorSeconds: nonNegative.default(10),
  /** No lease outlasts its task's wall-time limit (per run queued ahead of it) plus this. */
  leaseGraceSeconds: nonNegative.default(30),
  /**
   * The consumer's work estimate holds while the work the market measured is at most this many
   * times the declared; past it the estimate is contradicted: the charge follows the measured
   * work (up to the consumer's maxSpend) and lateness is the consumer's own.
   */
  estimateToleranceMultiple: z.number().min(1).max(1000).default(1.1),
  /**
   * Owners (other than the consumer) whose runs must have measured a job's work before the
   * measurement replaces the declared work: one owner cannot move it alone, however it reports.
   */
  workOwnersNeeded: z.number().int().min(1).max(1000).default(3),
  /** A job's work is measured on its first this many such runs; later ones change it no more. */
  workSamplesKept: z.number().int().min(1).max(10_000).default(25),
  /** A run measures its machine's speed only when it is expected to take at least this long (start-up is not work). */
  speedSampleMinSeconds: z.number().min(0).max(3600).default(1),
  /** A pilot task (a job without an estimate) is paid for at most this much reference work. */
  pilotWorkCapSeconds: z.number().positive().max(86_400).default(10),
  /** A job stops once this many of its tasks failed in a way another owner reproduced. */
  confirmedFailureLimit: z.number().int().min(1).max(1_000_000).default(3),
  /**
   * A task is given up once it failed this many times without a machine of another owner
   * reproducing the failure, or its copies ran this many times without a majority agreeing.
   */
  maxAttempts: z.number().int().min(2).max(100).default(3),
  /** How far one measured run moves a machine's speed towards what it showed (never above its benchmark). */
  speedSampleWeight: z.number().min(0).max(1).default(0.3),
});
export type SettlementTerms = z.infer<typeof SettlementTerms>;
export type SettlementTermsInput = z.input<typeof SettlementTerms>;
export const DEFAULT_TERMS: SettlementTerms = SettlementTerms.parse({});

/**
 * Leases a machine may hold at once per slot it offers: one running and the next behind it, so a
 * slot never waits a round trip for work. Runs queued behind others on a machine count in how
 * long a lease lasts (leaseTerm).
 */
export const LEASES_PER_SLOT = 2;
export const leaseRoom = (offeredSlots: number) => LEASES_PER_SLOT * Math.max(0, offeredSlots);
/** Leases a machine may still take while it holds `held`: its room less what it holds, never below 0. */
export const leaseRoomLeft = (offeredSlots: number, held: number) => Math.max(0, leaseRoom(offeredSlots) - held);

/**
 * The piece rate of a lease, fixed when it is handed out: the machine's ask (credits per reference
 * second, a speed-1 machine's second) times the task's work as the market knows it then. The
 * Java Market paper (5.5.2) pays for each second of successful use; measuring the seconds in the
 * market's own unit means neither a slow machine nor a claimed time changes what a task pays.
 */
export function pieceRate(askPerWorkSecond: number, work: number): number {
  return Math.max(0, askPerWorkSecond) * Math.max(0, work);
}

export interface LeaseTermInput {
  /** The task's work as the market knows it (reference seconds); undefined while unknown (pilots). */
  work: number | undefined;
  /** The machine's speed per slot as the market believes it. */
  speed: number;
  slots: number;
  /** Leases the machine held before this one: runs queued ahead of it on its slots. */
  ahead: number;
  wallSeconds: number;
}

/**
 * How long a lease lasts: `leaseTimeFactor` times the run time expected on that machine (the runs
 * queued ahead of it included), at least `leaseFloorSeconds`, never past the wall-time limit (for
 * each run ahead of it too) plus `leaseGraceSeconds`. A task of unknown work has only its limit.
 */
export function leaseTerm(t: SettlementTerms, l: LeaseTermInput): { expectedSeconds: number; lastsSeconds: number } {
  const runs = 1 + Math.floor(Math.max(0, l.ahead) / Math.max(1, l.slots));
  const wall = Math.max(0, l.wallSeconds);
  const limit = runs * wall + t.leaseGraceSeconds;
  if (l.work === undefined) return { expectedSeconds: runs * wall, lastsSeconds: limit };
  const speed = l.speed > 0 ? l.speed : 1;
  const expectedSeconds = (runs * Math.max(0, l.work)) / speed;
  return { expectedSeconds, lastsSeconds: Math.min(limit, Math.max(t.leaseFloorSeconds, t.leaseTimeFactor * expectedSeconds)) };
}

/**
 * The seconds the market vouches for a run: the time its own clock saw between the lease and the
 * report, lowered (never raised) by what the producer says the run took.
 */
export function vouchedSeconds(observedSeconds: number, reportedSeconds: number): number {
  const observed = Number.isFinite(observedSeconds) && observedSeconds > 0 ? observedSeconds : 0;
  const reported = Number.isFinite(reportedSeconds) && reportedSeconds >= 0 ? reportedSeconds : observed;
  return Math.min(observed, reported);
}

/** One run's measurement of a task's work: the vouched seconds on the machine's speed. */
export function workSample(r: { observedSeconds: number; reportedSeconds: number; speed: number }): number {
  return vouchedSeconds(r.observedSeconds, r.reportedSeconds) * (r.speed > 0 ? r.speed : 1);
}

/** One run's measurement of its job's work, and the owner of the machine that ran it. */
export interface WorkSample {
  owner: string;
  work: number;
}

/**
 * The work a job's tasks were measured to do: the median over owners of each owner's lowest
 * sample, or undefined while fewer than `ownersNeeded` owners measured it. A producer can only
 * lengthen what the market's clock sees (by reporting late), never shorten it, so each owner's
 * lowest sample is its most honest one; and no owner holds more than one vote.
 */
export function measuredWork(samples: readonly WorkSample[], ownersNeeded: number): number | undefined {
  const lowest = new Map<string, number>();
  for (const s of samples) if (Number.isFinite(s.work)) lowest.set(s.owner, Math.min(lowest.get(s.owner) ?? Infinity, s.work));
  if (lowest.size === 0 || lowest.size < ownersNeeded) return undefined;
  const w = [...lowest.values()].sort((a, b) => a - b);
  const mid = w.length >> 1;
  return Math.max(1e-3, w.length % 2 ? w[mid]! : (w[mid - 1]! + w[mid]!) / 2);
}

/**
 * The work a lease's piece rate is fixed at: the consumer's declared work until enough owners'
 * runs measured it (measuredWork), then what they measured.
 */
export function workAtLease(t: SettlementTerms, declared: number, samples: readonly WorkSample[]): number {
  return measuredWork(samples, t.workOwnersNeeded) ?? declared;
}

/**
 * What a pilot run pays (a job that gave no work estimate): its ask times the work the market
 * vouches the run did, never more than `pilotWorkCapSeconds` of reference work. The lease states
 * that most; the quote states the pilots' most.
 */
export function pilotPay(t: SettlementTerms, r: { askPerWorkSecond: number; speed: number; observedSeconds: number; reportedSeconds: number }): number {
  return pieceRate(r.askPerWorkSecond, Math.min(t.pilotWorkCapSeconds, workSample(r)));
}

/**
 * A machine's speed after a run of known work: moved towards the speed the market's own clock
 * measured, never above its benchmark (no run can raise it past what it showed at join). Used for
 * placement and expected completion only; it changes no piece rate.
 */
export function measuredSpeed(t: SettlementTerms, m: { benchmark: number; current: number }, r: { work: number; observedSeconds: number }): number {
  if (!(r.observedSeconds > 0) || !(r.work > 0)) return m.current;
  const sample = r.work / r.observedSeconds;
  const next = (1 - t.speedSampleWeight) * m.current + t.speedSampleWeight * sample;
  return Math.max(1e-6, Math.min(m.benchmark, next));
}

/**
 * Failures a worker reports of itself, not of the program: it could not fetch or compile the
 * module, its sandbox crashed, or it stopped the run. Such a run is not paid and runs again, but
 * no machine can confirm it as the program's.
 */
export const WORKER_TROUBLE_CODES = ["invalid-module", "crashed", "aborted"] as const;
const WORKER_TROUBLE = new Set<string>(WORKER_TROUBLE_CODES);

/** Whether a failure code can be the program's own (a trap, a limit, an exit code). */
export const programFailure = (code: string) => !WORKER_TROUBLE.has(code);

/** A failed run as the failure rule weighs it. */
export interface FailedRun {
  owner: string;
  code: string;
  /** The quorum's unit for the owner (quorum.ts verifierOf: one organisation's accounts count once); the owner when not given. */
  verifier?: string | undefined;
  /** The network the run came from, where known: two runs from one network are one person's. */
  network?: string | null | undefined;
  /** Whether the owner has standing (policies/standing.ts); taken as true when not given (a closed market). */
  standing?: boolean | undefined;
}

/** Two failed runs reproduce each other only from two owners, two verifiers and, where known, two networks. */
const independentRuns = (a: FailedRun, b: FailedRun) =>
  a.owner !== b.owner && (a.verifier ?? a.owner) !== (b.verifier ?? b.owner) && !(a.network && b.network && a.network === b.network);

/**
 * A failed run is the program's failure only when it was reproduced independently: the same
 * failure code (a deterministic trap, a limit) from two runs of different owners, verifiers and
 * networks, at least one of them an account with standing. Accounts cost nothing: two fresh
 * accounts of one person would otherwise confirm any failure they invent, and be paid for it from
 * the job's escrow (as a result of accounts without standing is never accepted without one that
 * has it). Returns that code, or null while no failure is confirmed.
 */
export function confirmedFailure(failures: readonly FailedRun[]): string | null {
  const byCode = new Map<string, FailedRun[]>();
  for (const f of failures) {
    if (!programFailure(f.code)) continue;
    let runs = byCode.get(f.code);
    if (!runs) byCode.set(f.code, (runs = []));
    if (runs.some((r) => independentRuns(r, f) && ((r.standing ?? true) || (f.standing ?? true)))) return f.code;
    runs.push(f);
  }
  return null;
}

/**
 * What each run of a task that failed the confirmed way is paid, micro-credits, in the order the
 * runs failed: its lease's piece, as far as the task's budget goes, its share of the quote (or the
 * largest piece one of its runs was leased for, when more). A failure takes two runs at least, and
 * each lease fitted the job's budget alone when it was handed out; paid in full, one person's two
 * dear machines confirming a failure they made up on their own consumer's job were paid twice
 * what the job is charged, the market's account paying the rest. So a task whose program fails
 * costs no more than one that succeeds: the confirming runs are paid from its share, the market's
 * fee, as retries are.
 */
export function failurePieces(pieces: readonly bigint[], share: bigint): bigint[] {
  let left = pieces.reduce((m, p) => (p > m ? p : m), share > 0n ? share : 0n);
  return pieces.map((p) => {
    const paid = p < 0n ? 0n : p < left ? p : left;
    left -= paid;
    return paid;
  });
}

/** The consumer's estimate is contradicted when the measured work is over the tolerance of what they declared. */
export function estimateContradicted(t: SettlementTerms, declaredWork: number, measuredWork: number): boolean {
  return measuredWork > t.estimateToleranceMultiple * Math.max(declaredWork, 0);
}

/**
 * What a job's escrow holds: what it can be charged under these rules. Posted pricing: the
 * quote, or the consumer's maxSpend when they allow more (a contradicted estimate may then be
 * charged up to it). Pay-as-bid: the curve's highest benefit.
 */
export function escrowFor(e: { pricing: "posted" | "bid"; price: number; maxSpend?: number | undefined; maxBenefit: number }): number {
  if (e.pricing === "bid") return Math.max(0, e.maxBenefit);
  return Math.max(0, e.price, e.maxSpend ?? 0);
}

/** A late run's piece rate, held in the escrow until the job is settled: it pays for the lateness first. */
export interface HeldPiece {
  producerId: string;
  amount: number;
  /** The producer is the consumer, or an account tied to them (same verified domain or network): it funds nothing. */
  related: boolean;
}

/** When a job completed, how long the market was down while it ran, and when its admitted plan said it would complete. */
export interface DowntimeInput {
  /** Seconds from the job's arrival to its completion. */
  took: number;
  /** Seconds of that the market was down. */
  down: number;
  /** Seconds from its arrival to the completion its admitted plan expected; undefined when unknown. */
  planned: number | undefined;
}

/**
 * b(j, t) had the market not been down: the benefit at completion plus what the outage took from
 * it. An outage delays a job by at most its length, and only a job that would have kept its plan:
 * the market answers for the benefit the outage takes from the planned completion, never more than
 * from the actual one. Lateness past that was someone else's (a producer that held its result
 * until the deadline had passed, say), however long the market was down meanwhile.
 */
export function benefitWithoutDowntime(curve: BenefitCurve, d: DowntimeInput): number {
  const atCompletion = benefitAt(curve, d.took);
  const down = Math.max(0, d.down);
  if (!(down > 0)) return atCompletion;
  const fromCompletion = benefitAt(curve, Math.max(0, d.took - down)) - atCompletion;
  const fromPlan = d.planned === undefined ? fromCompletion : benefitAt(curve, Math.max(0, d.planned)) - benefitAt(curve, Math.max(0, d.planned) + down);
  return atCompletion + Math.max(0, Math.min(fromCompletion, fromPlan));
}

export interface SettleInput {
  /** `posted`: the quoted price; `bid`: b(j, t) itself (the Java Market paper, 4.2). */
  pricing: "posted" | "bid";
  /** The price quoted at admission. */
  price: number;
  /** The most the consumer allowed (at least the price). */
  maxSpend: number;
  /** b(j, t) at the job's actual completion. */
  benefit: number;
  /** b(j, t) had the market not been down while the job ran (benefitWithoutDowntime; equal to `benefit` without downtime). */
  benefitWithoutDowntime: number;
  /** The measured work contradicted the consumer's estimate: what that work is charged (pricing.ts). */
  contradicted: { charge: number } | null;
  /** The piece rates of the job's late runs, held for lateness. */
  held: readonly HeldPiece[];
}

export interface Settlement {
  /** What the consumer pays in the end: negative when lateness relief exceeds the charge. */
  charge: number;
  /** Relief for lateness, from the held pieces of the producers who were late. */
  reliefFromLate: { producerId: string; amount: number }[];
  /** Relief for lateness the market's own downtime caused, from its account. */
  reliefFromMarket: number;
  /** What the late producers are paid of their held pieces after relief. */
  heldPaid: { producerId: string; amount: number }[];
  reasons: ChargeReason[];
}

/** Why a job was charged what it was: part of the market's vocabulary (vocabulary.ts). */
export const ChargeReason = z.discriminatedUnion("code", [
  z.object({ code: z.literal("charged-price"), price: z.number(), benefit: z.number() }).strict(),
  z.object({ code: z.literal("charged-measured-work"), price: z.number(), charge: z.number(), maxSpend: z.number() }).strict(),
  z.object({ code: z.literal("charged-benefit"), benefit: z.number() }).strict(),
  z.object({ code: z.literal("charged-share"), price: z.number(), tasks: z.number(), done: z.number(), failed: z.number(), share: z.number(), paid: z.number() }).strict(),
  z.object({ code: z.literal("lateness-relief"), owed: z.number(), fromLateProducers: z.number(), fromMarketDowntime: z.number() }).strict(),
  z.object({ code: z.literal("lateness-unfunded"), owed: z.number() }).strict(),
  z.object({ code: z.literal("lateness-consumers-own"), owed: z.number() }).strict(),
]);
export type ChargeReason = z.infer<typeof ChargeReason>;

const sumOf = (xs: readonly { amount: number }[]) => xs.reduce((s, x) => s + x.amount, 0);

/**
 * Settlement of a completed job. The consumer pays the quote while their work estimate holds
 * (retries, expired leases and slow machines were paid from forfeits and the market's fee), or
 * what the measured work is charged when it contradicted the estimate (never past maxSpend).
 * Lateness is paid by whoever caused it: when the benefit at completion fell below the charge,
 * the consumer is relieved of the difference (a negative benefit's penalty included) only from
 * the held pieces of producers who were late and not tied to the consumer, and from the market
 * for the part its own downtime caused, at most what the job is charged. Lateness nobody is
 * answerable for is not relieved: the quote says so.
 */
export function settleJob(s: SettleInput): Settlement {
  const reasons: ChargeReason[] = [];
  const late = s.held.filter((h) => h.amount > 0);
  const allHeld = () => late.map((h) => ({ producerId: h.producerId, amount: h.amount }));
  let base: number;
  if (s.pricing === "bid") {
    base = Math.max(0, s.benefit);
    reasons.push({ code: "charged-benefit", benefit: s.benefit });
  } else if (s.contradicted) {
    base = Math.min(Math.max(s.maxSpend, s.price), Math.max(s.price, s.contradicted.charge));
    reasons.push({ code: "charged-measured-work", price: s.price, charge: base, maxSpend: s.maxSpend });
  } else {
    base = Math.max(0, s.price);
    reasons.push({ code: "charged-price", price: s.price, benefit: s.benefit });
  }
  const owed = s.pricing === "bid" ? Math.max(0, -s.benefit) : Math.max(0, base - s.benefit);
  if (owed <= 0) return { charge: base, reliefFromLate: [], reliefFromMarket: 0, heldPaid: allHeld(), reasons };
  if (s.contradicted) {
    reasons.push({ code: "lateness-consumers-own", owed });
    return { charge: base, reliefFromLate: [], reliefFromMarket: 0, heldPaid: allHeld(), reasons };
  }
  // The late producers' held pieces first, in the order given (the order their runs were accepted).
  const reliefFromLate: { producerId: string; amount: number }[] = [];
  const heldPaid: { producerId: string; amount: number }[] = [];
  let left = owed;
  for (const h of late) {
    const take = h.related ? 0 : Math.min(left, h.amount);
    left -= take;
    if (take > 0) reliefFromLate.push({ producerId: h.producerId, amount: take });
    if (h.amount - take > 0) heldPaid.push({ producerId: h.producerId, amount: h.amount - take });
  }
  const downtimeCost = Math.max(0, s.benefitWithoutDowntime - s.benefit);
  const fromLate = sumOf(reliefFromLate);
  // The market answers for its downtime by waiving what the job is charged, never by paying out a
  // penalty: the curve is the consumer's claim, and its account would otherwise pay whatever
  // figure was written there (up to its reserve, past which no settlement could be written).
  const reliefFromMarket = Math.min(left, downtimeCost, Math.max(0, base - fromLate));
  left -= reliefFromMarket;
  if (fromLate > 0 || reliefFromMarket > 0) reasons.push({ code: "lateness-relief", owed, fromLateProducers: fromLate, fromMarketDowntime: reliefFromMarket });
  if (left > 1e-12) reasons.push({ code: "lateness-unfunded", owed: left });
  return { charge: base - fromLate - reliefFromMarket, reliefFromLate, reliefFromMarket, heldPaid, reasons };
}

export interface UnfinishedInput {
  /** Why it ended: its consumer cancelled it, its tasks failed for good, it reached its spending limit, or the market did not admit the rest planned from its pilots. */
  why: "cancelled" | "failed" | "escrow-exhausted" | "remainder-rejected";
  /** Whether it still ran as pilots, priced by their measured work alone (pilots.ts): it has no quote yet. */
  provisional: boolean;
  /** The price the job was admitted at (its quote; for a job planned from pilots, theirs and the rest's). */
  price: number;
  /** Its tasks, and those done. */
  tasks: number;
  done: number;
  /**
   * Its tasks not done with a failed run no other owner confirmed: the consumer saw how they
   * ended (the job's page lists their failures), so they count as done for the charge. Only a
   * failure that can be the program's (programFailure) counts: a worker's own trouble (its
   * sandbox crashed, it could not fetch the module) answers nothing, and a producer reporting it
   * over and over until the task is given up would otherwise make the consumer pay for a task
   * nobody ran.
   */
  failed: number;
  /** What its producers were paid of its escrow, the late runs' held pieces included. */
  paid: number;
  /** What its escrow was given: the most the job can be charged. */
  escrow: number;
}

/**
 * Settlement of a job that ends unfinished: the quote's share of the tasks done, or what its
 * producers were paid when that is more, never more than its escrow. A consumer who stops a job
 * once they hold the results they wanted (by cancelling it, or with a program that then fails on
 * purpose) pays for them as quoted, the market's congestion and fee included, as one whose job
 * completes does; a task whose run failed, unconfirmed, counts as done, since how it ended is an
 * answer too (an exit code, or that it failed at all). A job still running its pilots has no quote, and one whose rest the market did
 * not admit never agreed one: each is charged what its producers were paid.
 */
export function settleUnfinishedJob(u: UnfinishedInput): { charge: number; reasons: ChargeReason[] } {
  const quoted = !u.provisional && u.why !== "remainder-rejected" && u.tasks > 0;
  const share = quoted ? (Math.max(0, u.price) * Math.min(u.done + u.failed, u.tasks)) / u.tasks : 0;
  const charge = Math.min(Math.max(u.escrow, u.paid), Math.max(share, u.paid));
  return { charge, reasons: [{ code: "charged-share", price: quoted ? u.price : 0, tasks: u.tasks, done: u.done, failed: u.failed, share, paid: u.paid }] };
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
   * Up to when the machine has proved it is there: the last moment it leased what was queued for
   * it in time, or answered a probe task the market could check (contracts.ts). Heartbeats alone
   * prove nothing.
   */
  provenUntil: number;
}

/**
 * A dedicated machine is paid as its capacity is proved (the Java Market paper, 5.5.2, prices the
 * whole contract; paying it on acceptance, or for heartbeats, let a machine take the money and
 * never work): the share of c(m) for the time from `paidUntil` to the last proof, within the
 * contract. What a machine never proved is never paid.
 */
export function contractAccrual(a: ContractAccrualInput): { amount: number; paidUntil: number } {
  const length = a.departsAt - a.startAt;
  const from = Math.max(a.paidUntil, a.startAt);
  const to = Math.min(a.provenUntil, a.departsAt);
  if (!(length > 0) || !(a.contractPrice > 0) || !(to > from)) return { amount: 0, paidUntil: Math.max(from, a.paidUntil) };
  return { amount: (a.contractPrice * (to - from)) / length, paidUntil: to };
}
