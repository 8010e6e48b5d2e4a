// How an admitted job is priced (DESIGN.md "Settlement"). Under posted pricing the consumer pays
// the plan's marginal cost (producers' expected payments plus congestion, P x the abstract cost)
// plus the market's fee, never more than their benefit at the planned completion; miserly admission
// then chooses the completion that maximises b(t) - (1 + fee) cost(t), which is the consumer's own
// gain, so stating the true curve is their best strategy. Under bid pricing (seed 003, 4.2) the
// consumer pays b(j, t) and admission maximises the market's profit b(t) - cost(t).
import { benefitAt } from "./benefit.ts";
import type { Admitted } from "./decision.ts";
import type { Job } from "./job.ts";
import type { Plan } from "./pipeline/plan.ts";
import type { MarketSettings } from "./settings.ts";
import type { MarketState } from "./state/market-state.ts";

/** What admission maximises over candidate completions: the consumer's gain (posted) or the market's profit (bid). */
export function surplus(settings: MarketSettings, benefit: number, cost: number): number {
  return settings.pricing === "posted" ? benefit - (1 + settings.feeFraction) * cost : benefit - cost;
}

/** The price of an admitted plan and what it is made of. */
export function priceOf(state: MarketState, job: Job, plan: Plan, charge?: number): { price: number; priceParts: NonNullable<Admitted["priceParts"]> } {
  const s = state.settings;
  const benefit = benefitAt(job.benefit, plan.completionAt - job.arrivedAt);
  const producerPayments = expectedPayments(state, job, plan);
  const congestion = Math.max(0, plan.cost - producerPayments);
  if (s.pricing === "bid") return { price: benefit, priceParts: { producerPayments, congestion, fee: benefit - plan.cost } };
  // A share policy's own charge (its reason's expected charge) stands in for the marginal cost.
  const base = charge ?? plan.cost * (1 + s.feeFraction);
  const price = Math.max(0, Math.min(benefit, base));
  return { price, priceParts: { producerPayments, congestion, fee: price - producerPayments - congestion } };
}

/** cps(m) x w / v_m summed over the plan's placements: what the plan expects to pay producers. */
function expectedPayments(state: MarketState, job: Job, plan: Plan): number {
  const work = new Map(job.tasks.map((t) => [t.id, t.work]));
  const f = state.machines.f;
  let total = 0;
  for (const p of plan.placements) {
    const row = state.machines.rowById.get(p.machineId);
    if (row === undefined) continue;
    // The part before the first "~": replica r >= 1 of task t is `${t}~${r}` (expandTasks).
    const cut = p.taskId.indexOf("~");
    total += (f.pricePerSecond[row]! * (work.get(cut < 0 ? p.taskId : p.taskId.slice(0, cut)) ?? 0)) / f.speed[row]!;
  }
  return total;
}
