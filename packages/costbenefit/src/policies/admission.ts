// Admission rules. Miserly (seed 003, 4.2 and DESIGN.md steps 1-3): try each candidate completion
// time, keep the most profitable placement, admit only if profit is positive; otherwise delay
// while the job could still become profitable, and reject once it cannot or has waited too long.
import { benefitAt, breakpoints } from "../benefit.ts";
import type { Decision } from "../decision.ts";
import type { Job } from "../job.ts";
import type { Reason } from "../reasons.ts";
import type { MarketState } from "../state/market-state.ts";
import { createContext } from "../pipeline/context.ts";
import { buildPlan, expandTasks, type Chooser, type Plan } from "../pipeline/plan.ts";
import { earliestCompletion, highestPossibleCost, lowestPossibleCost } from "./bounds.ts";
import type { PolicyProfile } from "./profile.ts";
import { priceOf, surplus } from "../pricing.ts";

function admitted(state: MarketState, job: Job, plan: Plan, reasons: Reason[]): Decision {
  return {
    outcome: "admitted",
    jobId: job.id,
    completionAt: plan.completionAt,
    ...priceOf(state, job, plan),
    marginalCost: plan.cost,
    placements: plan.placements,
    reasons,
  };
}

/** Candidate completion times: the curve's breakpoints still ahead, then "whenever is cheapest". */
export function candidateTimes(job: Job, now: number, max: number): number[] {
  const ahead = breakpoints(job.benefit)
    .map((b) => job.arrivedAt + b)
    .filter((t) => t > now);
  const unique = [...new Set(ahead)].sort((a, b) => a - b).slice(0, max);
  return [...unique, Infinity];
}

export function miserlyAdmit(state: MarketState, job: Job, now: number, choose: Chooser, profile: PolicyProfile): Decision {
  if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
  const ctx = createContext(state, now, profile.minReputation);
  const groups = expandTasks(job);
  const times = candidateTimes(job, now, profile.maxCandidateTimes);
  let best: { plan: Plan; benefit: number; profit: number } | undefined;
  let failure: Reason | undefined;
  // The unconstrained plan first: a candidate time it already meets would give the same plan
  // (each task's cheapest machine already finishes in time), so only earlier times are tried.
  let unconstrainedAt = Infinity;
  for (const t of [times[times.length - 1]!, ...times.slice(0, -1)]) {
    if (t !== Infinity && t >= unconstrainedAt) continue;
    const r = buildPlan(ctx, groups, t, choose);
    if (t === Infinity && r.ok) unconstrainedAt = r.plan.completionAt;
    if (!r.ok) {
      failure = r.reason;
      continue;
    }
    const benefit = benefitAt(job.benefit, r.plan.completionAt - job.arrivedAt);
    const profit = surplus(state.settings, benefit, r.plan.cost);
    if (!best || profit > best.profit) best = { plan: r.plan, benefit, profit };
  }
  if (best && best.profit > 0) {
    const { plan, benefit, profit } = best;
    return admitted(state, job, plan, [{ code: "profitable", benefit, marginalCost: plan.cost, profit, completionAt: plan.completionAt, candidates: times.length }]);
  }

  // seed 003, 4.2: a benefit above the highest possible cost is always admitted, even when the
  // usage bounds leave no room; it must still cover the plan's actual cost.
  const highest = highestPossibleCost(state, job);
  ctx.bounded = false;
  const over = buildPlan(ctx, groups, Infinity, choose);
  ctx.bounded = true;
  if (over.ok) {
    const b = benefitAt(job.benefit, over.plan.completionAt - job.arrivedAt);
    if (b > highest && b >= over.plan.cost) {
      return admitted(state, job, over.plan, [{ code: "always-admit", benefit: b, highestPossibleCost: highest, marginalCost: over.plan.cost }]);
    }
  }

  const why: Reason = best
    ? {
        code: "unprofitable",
        benefit: best.benefit,
        marginalCost: best.plan.cost,
        completionAt: best.plan.completionAt,
        // Admission needs a positive surplus: the benefit at that completion must beat this.
        benefitNeeded: best.benefit - surplus(state.settings, best.benefit, best.plan.cost),
      }
    : (failure ?? { code: "no-machines" });
  const earliest = earliestCompletion(state, job, now);
  const benefitAtEarliest = benefitAt(job.benefit, earliest - job.arrivedAt);
  const lowest = lowestPossibleCost(state, job);
  if (benefitAtEarliest <= lowest) {
    return { outcome: "rejected", jobId: job.id, reasons: [why, { code: "cannot-become-profitable", benefitAtEarliest, lowestPossibleCost: lowest, earliestCompletionAt: earliest }] };
  }
  const waited = now - job.arrivedAt;
  if (waited >= state.settings.maxDelaySeconds) {
    return { outcome: "rejected", jobId: job.id, reasons: [why, { code: "max-wait-exceeded", waitedSeconds: waited, maxDelaySeconds: state.settings.maxDelaySeconds }] };
  }
  return { outcome: "delayed", jobId: job.id, reasons: [why] };
}

/** No admission control (E-PVM, PVM, Mosix, random, FCFS): every job is placed somewhere. */
export function admitAll(state: MarketState, job: Job, now: number, choose: Chooser, profile: PolicyProfile, policy: string): Decision {
  if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
  const ctx = createContext(state, now, profile.minReputation);
  const groups = expandTasks(job);
  // The system-friendly strategy keeps usage within its maximum while it can (the competitive
  // online assignment behind seed 003, 4.3) and only then overflows; baselines never look.
  let r = profile.placement === "marginal-cost" ? buildPlan(ctx, groups, Infinity, choose) : undefined;
  if (r && !r.ok && profile.holdBeyondBounds) {
    const waited = now - job.arrivedAt;
    if (waited < state.settings.maxDelaySeconds) return { outcome: "delayed", jobId: job.id, reasons: [r.reason] };
  }
  if (!r?.ok) {
    ctx.bounded = false;
    r = buildPlan(ctx, groups, Infinity, choose);
  }
  if (!r.ok) {
    // Only memory, reputation or replicas can block an unbounded plan: wait for a bigger machine.
    const waited = now - job.arrivedAt;
    if (waited >= state.settings.maxDelaySeconds) {
      return { outcome: "rejected", jobId: job.id, reasons: [r.reason, { code: "max-wait-exceeded", waitedSeconds: waited, maxDelaySeconds: state.settings.maxDelaySeconds }] };
    }
    return { outcome: "delayed", jobId: job.id, reasons: [r.reason] };
  }
  return admitted(state, job, r.plan, [{ code: "no-admission-control", policy, marginalCost: r.plan.cost }]);
}
