// Bounds on what a job can cost and earn, for the always-admit rule and the delay/reject choice.
import type { Job } from "../job.ts";
import type { MarketState } from "../state/market-state.ts";

/**
 * seed 003, 4.2: "a job whose benefit is greater than the highest possible cost will always be
 * accepted". While every machine's usage is within its maximum, adding demand d (as a fraction
 * of the smallest machine's maximum) costs at most n^(1 + d) - n per resource (less for compute,
 * whose bound already admits part of the task's share). Plus the dearest producer's payment.
 */
export function highestPossibleCost(state: MarketState, job: Job): number {
  const a = state.aggregates();
  const s = state.settings;
  const n = state.n;
  const H = s.horizonSeconds;
  let total = 0;
  for (const t of job.tasks) {
    // Compute may end above its maximum by the part of the task's share beyond H/2 (feasibility).
    const dc = Math.max(0, t.work / a.minCapacity / H - 0.5);
    const dm = t.memoryMb / a.minMemoryTotal;
    const dn = t.bytes / (s.linkBytesPerSecond * H);
    const units = Math.pow(n, 1 + dc) + Math.pow(n, 1 + dm) + Math.pow(n, 1 + dn) - 3 * n;
    total += s.priceConstant * units + t.work * a.maxPricePerWork;
  }
  return total * job.replicas;
}

/** Cost of the job on the biggest machine of an empty market: no plan can cost less. */
export function lowestPossibleCost(state: MarketState, job: Job): number {
  const a = state.aggregates();
  const s = state.settings;
  const n = state.n;
  let total = 0;
  for (const t of job.tasks) total += s.priceConstant * (Math.pow(n, t.work / a.maxCapacity / s.horizonSeconds) - 1);
  return total * job.replicas;
}

/** The soonest the job could complete: every task alone on the fastest slot, at full bandwidth. */
export function earliestCompletion(state: MarketState, job: Job, now: number): number {
  const a = state.aggregates();
  let longest = 0;
  for (const t of job.tasks) longest = Math.max(longest, t.work / a.maxSpeed + t.bytes / a.maxBandwidth);
  return now + longest;
}
