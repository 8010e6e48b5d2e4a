// The miserly admission strategy (seed 003, 4.2 and DESIGN.md steps 1-3): try each candidate completion
// time, keep the most profitable placement, admit only if profit is positive; otherwise delay
// while the job could still become profitable, and reject once it cannot or has waited too long.
import { benefitAt, maxBenefit } from "../benefit.ts";
import type { Decision } from "../decision.ts";
import type { Job } from "../job.ts";
import type { Reason } from "../reasons.ts";
import type { MarketState } from "../state/market-state.ts";
import { createContext, type SearchContext } from "../pipeline/context.ts";
import type { TaskShape } from "../pipeline/feasibility.ts";
import { buildPlan, expandTasks, planWithin, type Chooser, type Plan } from "../pipeline/plan.ts";
import { earliestCompletion, highestPossibleCost, lowestPossibleCost } from "./bounds.ts";
import type { PolicyProfile } from "./profile.ts";
import { admitted, delayOrReject } from "./outcomes.ts";
import { surplus } from "../pricing.ts";

/** The latest deadline that excludes a completion at `t`: plans must finish strictly earlier. */
function justBefore(t: number): number {
  return t - 1e-9 * Math.max(1, Math.abs(t));
}

/**
 * The market's menu for a job: the greedy plan with no deadline, then the greedy plan that must
 * finish strictly before the previous one, and so on until no plan can, at most `max` + 1 plans.
 * A deadline between two consecutive completions gives the same greedy plan as the later one
 * (every task's chosen machine already finishes in time, and the feasible sets only shrink), so
 * this is every plan any candidate time could give. The plans read the job's tasks, never its
 * benefit curve: the consumer picks from a menu their report cannot change, which is what makes
 * posted prices truthful (README "Pricing rules"). Trying the curve's breakpoints instead let a
 * consumer invent a deadline to conjure a plan the truth was never offered.
 *
 * `enough(plan)` ends the walk early once no earlier plan can be worth more to the consumer: the
 * curve is flat from the earliest possible completion to this plan's. Plans further on could
 * only win by costing less, and a plan that must finish earlier never costs less for a one-task
 * job (its feasible machines only shrink); pricing.test.ts checks jobs of up to three tasks.
 */
export function menuOfPlans(ctx: SearchContext, groups: TaskShape[][], choose: Chooser, max: number, enough: (p: Plan) => boolean): { plans: Plan[]; failure?: Reason } {
  const plans: Plan[] = [];
  let deadline = Infinity;
  for (let k = 0; k <= max; k++) {
    const r = buildPlan(ctx, groups, deadline, choose);
    if (!r.ok) return { plans, failure: r.reason };
    plans.push(r.plan);
    if (enough(r.plan)) break;
    deadline = justBefore(r.plan.completionAt);
  }
  return { plans };
}

export function miserlyAdmit(state: MarketState, job: Job, now: number, choose: Chooser, profile: PolicyProfile): Decision {
  if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
  const ctx = createContext(state, now, profile.minReputation);
  const groups = expandTasks(job);
  // Nothing can complete before every task runs alone on the fastest slot (bounds.ts).
  const bestBenefit = benefitAt(job.benefit, earliestCompletion(state, job, now) - job.arrivedAt);
  const menu = menuOfPlans(ctx, groups, choose, profile.maxCandidateTimes, (p) => benefitAt(job.benefit, p.completionAt - job.arrivedAt) >= bestBenefit);
  const failure = menu.failure;
  let best: { plan: Plan; benefit: number; profit: number } | undefined;
  for (const plan of menu.plans) {
    const benefit = benefitAt(job.benefit, plan.completionAt - job.arrivedAt);
    const profit = surplus(state.settings, benefit, plan.cost);
    if (!best || profit > best.profit) best = { plan, benefit, profit };
  }
  if (best && best.profit > 0) {
    const { plan, benefit, profit } = best;
    return admitted(state, job, plan, [{ code: "profitable", benefit, marginalCost: plan.cost, profit, completionAt: plan.completionAt, candidates: menu.plans.length }]);
  }

  // seed 003, 4.2: a benefit above the highest possible cost is always admitted, even when the
  // usage bounds leave no room; it must still cover the plan's actual cost.
  const highest = highestPossibleCost(state, job);
  // No benefit exceeds the curve's first value (curves never rise): when that is not above the
  // highest possible cost, or once the plan costs more than it, the plan cannot be admitted, so
  // it is not built, or not built further (a delayed 10,000-task job is asked again often).
  const most = maxBenefit(job.benefit);
  if (most > highest) {
    ctx.bounded = false;
    const over = planWithin(ctx, groups, Infinity, choose, most);
    ctx.bounded = true;
    if (over) {
      const b = benefitAt(job.benefit, over.completionAt - job.arrivedAt);
      if (b > highest && b >= over.cost) {
        return admitted(state, job, over, [{ code: "always-admit", benefit: b, highestPossibleCost: highest, marginalCost: over.cost }]);
      }
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
  return delayOrReject(state, job, now, why);
}
