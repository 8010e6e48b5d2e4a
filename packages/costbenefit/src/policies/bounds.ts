// Bounds on what a job can cost and earn, for the always-admit rule and the delay/reject choice.
import { resourceMarginalCost, unitsToCredits } from "../cost.ts";
import type { Job } from "../job.ts";
import type { MarketState } from "../state/market-state.ts";

/**
 * the Java Market paper, 4.2: "a job whose benefit is greater than the highest possible cost will always be
 * accepted". While every machine's usage is within its maximum, the job's whole demand D (as a
 * fraction of the smallest machine's maximum) costs at most n^(1 + D) - n per resource, even if
 * all its tasks land on one machine (n^x is convex, so splitting them costs less). Plus the
 * dearest producer's payment for all the work.
 */
export function highestPossibleCost(state: MarketState, job: Job): number {
  return highestCostOf(state, demandOf(job));
}

/** A job's whole demand: its tasks' work, memory and bytes summed, and its copies per task. */
export interface Demand {
  work: number;
  memoryMb: number;
  bytes: number;
  replicas: number;
}

export function demandOf(job: Job): Demand {
  let work = 0;
  let memoryMb = 0;
  let bytes = 0;
  for (const t of job.tasks) {
    work += t.work;
    memoryMb += t.memoryMb;
    bytes += t.bytes;
  }
  return { work, memoryMb, bytes, replicas: job.replicas };
}

/** highestPossibleCost of a demand whose work is `workRatio` times the one given (pricing.ts prices plans at other amounts of work). */
export function highestCostOf(state: MarketState, d: Demand, workRatio = 1): number {
  const a = state.aggregates();
  const s = state.settings;
  const n = state.n;
  const H = s.horizonSeconds;
  const k = d.replicas;
  const work = d.work * workRatio;
  const units = atMax(n, (k * work) / a.minCapacity, H) + atMax(n, k * d.memoryMb, a.minMemoryTotal) + atMax(n, k * d.bytes, s.linkBytesPerSecond * H);
  return s.priceConstant * units + k * work * a.maxPricePerWork;
}

/** A resource at its maximum already, then the demand added: n^(1 + D) - n. */
function atMax(n: number, demand: number, max: number): number {
  return resourceMarginalCost(n, max, max, demand);
}

/** Cost of the job on the biggest machine of an empty market: no plan can cost less. */
export function lowestPossibleCost(state: MarketState, job: Job): number {
  const a = state.aggregates();
  const s = state.settings;
  const n = state.n;
  let total = 0;
  // Tasks of one job mostly share one work figure: its cost is worked out once, then summed in
  // the same order as before, so the bound is the same to the last bit.
  let work = NaN;
  let each = 0;
  for (const t of job.tasks) {
    if (t.work !== work) {
      work = t.work;
      each = unitsToCredits(resourceMarginalCost(n, 0, s.horizonSeconds, work / a.maxCapacity), s.priceConstant);
    }
    total += each;
  }
  return total * job.replicas;
}

/** The soonest the job could complete: every task alone on the fastest slot, at full bandwidth. */
export function earliestCompletion(state: MarketState, job: Job, now: number): number {
  const a = state.aggregates();
  let longest = 0;
  for (const t of job.tasks) longest = Math.max(longest, t.work / a.maxSpeed + t.bytes / a.maxBandwidth);
  return now + longest;
}
