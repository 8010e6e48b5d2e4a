// Which runs measure what (the market's own clock, settlement.ts workSample and measuredSpeed), and
// what a contradicted work estimate is charged before the consumer's maxSpend caps it. Pure: the
// Market Manager passes what it knows of the run and records the answers.
import { estimateContradicted, measuredSpeed, measuredWork, workSample, type SettlementTerms, type WorkSample } from "./settlement.ts";
import { priceAtRatio } from "./pricing.ts";
import type { WorkPrice } from "./decision.ts";

export interface RunOf {
  /** Seconds the market's clock saw between the lease and the report, and what the producer says the run took. */
  observedSeconds: number;
  reportedSeconds: number;
  /** The machine's owner, its speed as the market believes it, and the network it registered from. */
  owner: string;
  speed: number;
  network: string | null;
}

export interface JobOf {
  /** The consumer, and the network the job was submitted from. */
  owner: string;
  submitNetwork: string | null;
  /** The samples of its work taken so far. */
  samplesTaken: number;
}

/**
 * The sample of its job's work a run on time takes, or null: only a machine not tied to the
 * consumer (another owner, and another network when the job's is known) measures the work, and
 * only the first `workSamplesKept` such runs do. The consumer's own machines could otherwise make
 * their estimate look right.
 */
export function workSampleOf(t: SettlementTerms, run: RunOf, job: JobOf): WorkSample | null {
  const independent = run.owner !== job.owner && (job.submitNetwork === null || run.network !== job.submitNetwork);
  if (!independent || job.samplesTaken >= t.workSamplesKept) return null;
  return { owner: run.owner, work: workSample(run) };
}

/** A change of a machine's speed smaller than this fraction is noise, not worth a write. */
export const SPEED_CHANGE_NOISE = 0.02;

export interface SpeedRunInput {
  /** The job's work as measured so far (measuredWork), undefined while unknown. */
  knownWork: number | undefined;
  /** The run was a pilot's (its work is what is being measured). */
  pilot: boolean;
  /** Leases the machine held before this one, and its slots: a run queued behind others did not start at once. */
  ahead: number;
  slots: number;
  observedSeconds: number;
  /** The machine's speed now and at its benchmark. */
  speed: number;
  benchmark: number;
}

/**
 * A machine's new speed after a run, or null when the run measures none: only a run of known
 * work, not a pilot's, that started at once and was expected to take at least
 * `speedSampleMinSeconds` measures it (measuredSpeed), and a change within SPEED_CHANGE_NOISE is kept out.
 */
export function speedAfterRun(t: SettlementTerms, r: SpeedRunInput): number | null {
  if (r.knownWork === undefined || r.pilot || r.ahead >= r.slots || r.knownWork / r.speed < t.speedSampleMinSeconds) return null;
  const next = measuredSpeed(t, { benchmark: r.benchmark, current: r.speed }, { work: r.knownWork, observedSeconds: r.observedSeconds });
  return Math.abs(next - r.speed) > SPEED_CHANGE_NOISE * r.speed ? next : null;
}

/**
 * The measured work when it contradicts a posted-price job's estimate (estimateContradicted), else
 * undefined: under pay-as-bid the charge is the benefit whatever the work.
 */
export function contradictedWork(t: SettlementTerms, job: { pricing: "posted" | "bid"; declaredWork: number; samples: readonly WorkSample[] }): number | undefined {
  if (job.pricing !== "posted") return undefined;
  const measured = measuredWork(job.samples, t.workOwnersNeeded);
  return measured !== undefined && estimateContradicted(t, job.declaredWork, measured) ? measured : undefined;
}

/**
 * What a job's leases may promise producers in all (its pieces paid, held for late runs and
 * promised to live leases): the most the job can be charged as things stand. Under posted pricing
 * that is the quote while the estimate holds, whatever the consumer's maxSpend put in escrow beside
 * it (retries, expired leases and dearer machines are paid from the quote's fee, and a piece past
 * it waits for a machine that asks less), and once the measured work contradicted the estimate,
 * what that work is charged (`contradictedCharge`, measuredWorkCharge), up to the escrow. Under
 * pay-as-bid, the escrow (the curve's highest benefit).
 */
export function leaseBudget(job: { pricing: "posted" | "bid"; price: number; escrow: number; contradictedCharge: number | null }): number {
  const escrow = Math.max(0, job.escrow);
  if (job.pricing === "bid") return escrow;
  return Math.min(escrow, Math.max(0, job.price, job.contradictedCharge ?? 0));
}

/**
 * What a job whose measured work contradicted its estimate is charged before the consumer's
 * maxSpend caps it: its admitted plan priced at the measured work (priceAtRatio, read from the
 * points fixed at admission). Cost is convex in work, so a price scaled in proportion would let an
 * estimate declared too small pay less than the truth; in proportion only for a job admitted
 * before the points were kept (`priceAtWork` null).
 */
export function measuredWorkCharge(job: { price: number; declaredWork: number; priceAtWork: readonly WorkPrice[] | null }, measured: number): number {
  const ratio = measured / Math.max(job.declaredWork, 1e-9);
  return job.priceAtWork ? priceAtRatio(job.priceAtWork, ratio) : job.price * Math.max(1, ratio);
}
