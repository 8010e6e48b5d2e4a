// How every policy writes its decision on a job. Admitted: the plan at the price the market's
// pricing rule sets. Not admitted now: the one rule for jobs that wait (docs/DESIGN.md step 3), delayed,
// and rejected once it has waited the market's maximum (settings.maxDelaySeconds). Every policy's
// admission and every tick read it from here, so there is one limit and one reason for it.
import type { Decision, TickResult } from "../decision.ts";
import type { Job } from "../job.ts";
import type { Plan } from "../pipeline/plan.ts";
import { quoteOf, type MenuPricing } from "../pricing.ts";
import type { Reason } from "../reasons.ts";
import type { DelayedJob, MarketState } from "../state/market-state.ts";

/**
 * The job admitted with `plan`. A share policy charges by its own rule under posted pricing: the
 * expected charge in its reasons (opportunity cost, continuous bids) stands in for the marginal
 * cost; every other policy is priced from the plan's cost, the miserly menu as `menu` says
 * (miserly.ts).
 */
export function admitted(state: MarketState, job: Job, plan: Plan, now: number, reasons: Reason[], menu?: MenuPricing): Decision {
  const own = reasons.map((r) => ("expectedCharge" in r ? r.expectedCharge : undefined)).find((c) => c !== undefined);
  const { price, priceParts, priceAtWork } = quoteOf(state, job, plan, now, own, menu);
  return { outcome: "admitted", jobId: job.id, completionAt: plan.completionAt, price, priceParts, marginalCost: plan.cost, placements: plan.placements, priceAtWork, reasons };
}

/** The `max-wait-exceeded` reason when a job that arrived at `arrivedAt` has waited its maximum by `now`. */
export function maxWaitExceeded(state: MarketState, arrivedAt: number, now: number): Reason | undefined {
  const waited = now - arrivedAt;
  const max = state.settings.maxDelaySeconds;
  return waited >= max ? { code: "max-wait-exceeded", waitedSeconds: waited, maxDelaySeconds: max } : undefined;
}

/** Delayed for `why`, or rejected for `why` and the wait once the job has waited its maximum. */
export function delayOrReject(state: MarketState, job: Job, now: number, why: Reason): Decision {
  const over = maxWaitExceeded(state, job.arrivedAt, now);
  if (over) return { outcome: "rejected", jobId: job.id, reasons: [why, over] };
  return { outcome: "delayed", jobId: job.id, reasons: [why] };
}

/** The first wait before a delayed job is asked again; it doubles up to settings.maxRecheckSeconds. */
const FIRST_RECHECK_SECONDS = 1;

/**
 * Whether a delayed job whose capacity changed is asked again now: at once when machines joined
 * or left since it was last asked, otherwise once its backoff has passed (settings.maxRecheckSeconds).
 */
export function recheckDue(state: MarketState, d: DelayedJob, now: number): boolean {
  if (d.epoch >= state.epoch) return false;
  return askedAgainDue(state, { at: d.evaluatedAt, times: d.evaluations, machines: d.machines }, now);
}

/** When something the engine did not take (a delayed job, a pilot job's delayed rest) was last put to it. */
export interface Asked {
  /** Engine time, seconds. */
  at: number;
  times: number;
  /** Machines in the market then. */
  machines: number;
}

/**
 * The one backoff of asking again: at once when machines joined or left since, otherwise once the
 * wait has passed, 1 s doubling with each time asked up to settings.maxRecheckSeconds.
 */
export function askedAgainDue(state: MarketState, asked: Asked | undefined, now: number): boolean {
  if (!asked) return true;
  if (asked.machines !== state.machineCount) return true;
  const wait = Math.min(state.settings.maxRecheckSeconds, FIRST_RECHECK_SECONDS * 2 ** Math.max(0, asked.times - 1));
  return now - asked.at >= wait;
}

/** The record of asking now, after `previous`. */
export function askedNow(state: MarketState, previous: Asked | undefined, now: number): Asked {
  return { at: now, times: (previous?.times ?? 0) + 1, machines: state.machineCount };
}

/**
 * A tick's look at the delayed jobs: those that have waited their maximum are rejected, those
 * whose capacity changed since they were last evaluated are due again (oldest first, recheckDue).
 */
export function reviewDelayed(state: MarketState, now: number): { reject: TickResult["reject"]; changed: DelayedJob[] } {
  const reject: TickResult["reject"] = [];
  const changed: DelayedJob[] = [];
  for (const d of state.delayed.values()) {
    const over = maxWaitExceeded(state, d.job.arrivedAt, now);
    if (over) reject.push({ jobId: d.job.id, reasons: [over] });
    else if (recheckDue(state, d, now)) changed.push(d);
  }
  changed.sort((a, b) => a.job.arrivedAt - b.job.arrivedAt || (a.job.id < b.job.id ? -1 : 1));
  return { reject, changed };
}
