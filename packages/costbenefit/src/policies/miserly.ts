// The miserly admission strategy (the Java Market paper, 4.2 and docs/DESIGN.md steps 1-3): build the market's menu
// of plans, keep the one with the most surplus, admit only if it is positive; otherwise delay
// while the job could still become profitable, and reject once it cannot or has waited too long.
import { benefitAt } from "../benefit.ts";
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
import { alwaysAdmitCost, surplus } from "../pricing.ts";

/** The latest deadline that excludes a completion at `t`: plans must finish strictly earlier. */
function justBefore(t: number): number {
  return t - 1e-9 * Math.max(1, Math.abs(t));
}

/** One plan of the menu and the cost its price is made from. */
export interface MenuItem {
  plan: Plan;
  /**
   * What the consumer pays for, times (1 + fee) under posted prices: the plan's own cost, or the
   * dearest cost of the plans before it in the walk when that is more. A plan that must finish
   * earlier is then never cheaper on the menu, which is what lets the walk stop early without
   * changing the choice (menuOfPlans).
   */
  pricedCost: number;
}

/** How a walk prices its plans besides their own costs. */
export interface MenuPrice {
  /** No plan is priced from less than this cost (the always-admit walk: alwaysAdmitCost). */
  floor?: number;
  /** Plans that cost more than this cannot be chosen: the walk stops at the first one, unbuilt. */
  maxCost?: number;
}

/**
 * The market's menu for a job: the greedy plan with no deadline, then the greedy plan that must
 * finish strictly before the previous one, and so on until no plan can, at most `max` + 1 plans.
 * A deadline between two consecutive completions gives the same greedy plan as the later one
 * (every task's chosen machine already finishes in time, and the feasible sets only shrink), so
 * this is every plan any candidate time could give. The plans and their priced costs read the
 * job's tasks and the market, never the benefit curve: the consumer picks from a menu their
 * report cannot change, which is what makes posted prices truthful (README "Pricing rules").
 *
 * `enough(item)` may end the walk once no plan further on can be chosen: the caller stops once
 * the reported curve is flat from the earliest possible completion to this plan's. Every later
 * plan finishes no earlier than that and is priced at least as high (priced costs never fall
 * along the walk), so it cannot beat this one, and the choice is the one the whole walk would
 * give. Stopping on the plans' own costs was not enough: for jobs of several tasks the greedy
 * plan that must finish earlier can cost less than the one before it, and a consumer whose true
 * curve is flat could report a deadline to walk on and buy it.
 */
export function menuOfPlans(ctx: SearchContext, groups: TaskShape[][], choose: Chooser, max: number, enough: (item: MenuItem) => boolean, price: MenuPrice = {}): { items: MenuItem[]; failure?: Reason } {
  const items: MenuItem[] = [];
  let deadline = Infinity;
  let priced = price.floor ?? -Infinity;
  const most = price.maxCost ?? Infinity;
  for (let k = 0; k <= max; k++) {
    let plan: Plan;
    if (most < Infinity) {
      // A plan that costs more than `most` is priced above it, and so is every plan after it.
      const within = planWithin(ctx, groups, deadline, choose, most);
      if (!within) break;
      plan = within;
    } else {
      const r = buildPlan(ctx, groups, deadline, choose);
      if (!r.ok) return { items, failure: r.reason };
      plan = r.plan;
    }
    priced = Math.max(priced, plan.cost);
    const item = { plan, pricedCost: priced };
    items.push(item);
    if (enough(item)) break;
    deadline = justBefore(plan.completionAt);
  }
  return { items };
}

/** The reported curve is as high at this plan's completion as before the earliest possible one: the walk may stop (menuOfPlans). */
function flatTo(job: Job, item: MenuItem, top: number): boolean {
  return benefitAt(job.benefit, item.plan.completionAt - job.arrivedAt) >= top;
}

export function miserlyAdmit(state: MarketState, job: Job, now: number, choose: Chooser, profile: PolicyProfile): Decision {
  if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
  const settings = state.settings;
  const ctx = createContext(state, now, profile.minReputation);
  const groups = expandTasks(job);
  // Nothing can complete before every task runs alone on the fastest slot (bounds.ts); read the
  // curve just before that, so a last-bit difference in how a finish is summed cannot matter.
  const earliest = earliestCompletion(state, job, now);
  const top = benefitAt(job.benefit, justBefore(earliest) - job.arrivedAt);
  const menu = menuOfPlans(ctx, groups, choose, profile.maxCandidateTimes, (item) => flatTo(job, item, top));
  const failure = menu.failure;
  let best: { item: MenuItem; benefit: number; profit: number } | undefined;
  for (const item of menu.items) {
    const benefit = benefitAt(job.benefit, item.plan.completionAt - job.arrivedAt);
    const profit = surplus(settings, benefit, item.pricedCost);
    if (!best || profit > best.profit) best = { item, benefit, profit };
  }

  // the Java Market paper, 4.2: a benefit above the highest possible cost is always admitted, even when the
  // usage bounds leave no room. Here that is a second walk of the same menu without the bounds,
  // each plan priced at least at the highest possible cost (alwaysAdmitCost), taken only when it
  // gives more surplus than every plan within the bounds: the truth's best again, so overstating
  // the curve to pass the threshold buys nothing (README "Pricing rules"), and a consumer who
  // needs a fast plan past the bounds is offered one, as one who declared too little work would
  // be. Every surplus there is at most the curve's value before the earliest completion less that
  // cost: when that cannot win the walk is not made, and it stops at the first plan whose cost
  // alone passes that value (a delayed 10,000-task job is asked again often).
  const floor = Math.max(0, best?.profit ?? 0);
  const highest = top > floor ? highestPossibleCost(state, job) : Infinity;
  if (top - highest > floor) {
    ctx.bounded = false;
    const over = menuOfPlans(ctx, groups, choose, profile.maxCandidateTimes, (item) => flatTo(job, item, top), { floor: alwaysAdmitCost(settings, 0, highest), maxCost: top });
    ctx.bounded = true;
    let chosen: { item: MenuItem; benefit: number; profit: number } | undefined;
    for (const item of over.items) {
      const benefit = benefitAt(job.benefit, item.plan.completionAt - job.arrivedAt);
      const profit = surplus(settings, benefit, item.pricedCost);
      if (profit > (chosen?.profit ?? floor)) chosen = { item, benefit, profit };
    }
    if (chosen) {
      const { item, benefit } = chosen;
      return admitted(state, job, item.plan, now, [{ code: "always-admit", benefit, highestPossibleCost: highest, marginalCost: item.plan.cost }], { pricedCost: item.pricedCost, alwaysAdmit: true });
    }
  }
  if (best && best.profit > 0) {
    const { item, benefit, profit } = best;
    return admitted(state, job, item.plan, now, [{ code: "profitable", benefit, marginalCost: item.plan.cost, profit, completionAt: item.plan.completionAt, candidates: menu.items.length }], { pricedCost: item.pricedCost, alwaysAdmit: false });
  }

  const why: Reason = best
    ? {
        code: "unprofitable",
        benefit: best.benefit,
        marginalCost: best.item.plan.cost,
        completionAt: best.item.plan.completionAt,
        // Admission needs a positive surplus: the benefit at that completion must beat this.
        benefitNeeded: best.benefit - surplus(settings, best.benefit, best.item.pricedCost),
      }
    : (failure ?? { code: "no-machines" });
  const benefitAtEarliest = benefitAt(job.benefit, earliest - job.arrivedAt);
  const lowest = lowestPossibleCost(state, job);
  if (benefitAtEarliest <= lowest) {
    return { outcome: "rejected", jobId: job.id, reasons: [why, { code: "cannot-become-profitable", benefitAtEarliest, lowestPossibleCost: lowest, earliestCompletionAt: earliest }] };
  }
  return delayOrReject(state, job, now, why);
}
