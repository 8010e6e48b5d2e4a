// How an admitted job is priced (docs/DESIGN.md "Settlement"). Under posted pricing the consumer pays
// the plan's marginal cost (producers' expected payments plus congestion, P x the abstract cost)
// plus the market's fee, never more than their benefit at the planned completion; miserly admission
// then chooses the completion that maximises b(t) - (1 + fee) cost(t), which is the consumer's own
// gain, so stating the true curve is their best strategy. Under bid pricing (the Java Market paper, 4.2) the
// consumer pays b(j, t) and admission maximises the market's profit b(t) - cost(t).
//
// The work a job declares is a report too. A contradicted estimate is charged the admitted plan
// priced again at the measured work (chargeForWork), from figures fixed at admission
// (pricesAtWork), so declaring less work than the truth buys nothing (README "Pricing rules").
import { benefitAt, MAX_CREDITS, type BenefitCurve } from "./benefit.ts";
import type { Admitted, WorkPrice } from "./decision.ts";
import type { Job } from "./job.ts";
import type { Plan } from "./pipeline/plan.ts";
import type { MarketSettings } from "./settings.ts";
import type { MarketState } from "./state/market-state.ts";
import { demandOf, highestCostOf, type Demand } from "./policies/bounds.ts";

/** What admission maximises over candidate completions: the consumer's gain (posted) or the market's profit (bid). */
export function surplus(settings: MarketSettings, benefit: number, cost: number): number {
  return settings.pricing === "posted" ? benefit - (1 + settings.feeFraction) * cost : benefit - cost;
}

/**
 * The cost the always-admit plan is priced from (the Java Market paper, 4.2: a benefit above the highest
 * possible cost is always admitted): its own, but never less than the highest possible cost
 * (after the fee under posted prices). Priced at its marginal cost alone, the plan was a way
 * past the usage bounds that any consumer could take by overstating their curve past the
 * threshold; at this price a consumer whose true benefit is below the threshold loses by it.
 */
export function alwaysAdmitCost(settings: MarketSettings, cost: number, highestPossibleCost: number): number {
  return Math.max(cost, settings.pricing === "posted" ? highestPossibleCost / (1 + settings.feeFraction) : highestPossibleCost);
}

/** The price of an admitted plan, what it is made of, and the same plan priced at other amounts of work. */
export interface Quote {
  price: number;
  priceParts: NonNullable<Admitted["priceParts"]>;
  priceAtWork: WorkPrice[];
}

/** How the miserly menu priced a plan (miserly.ts). */
export interface MenuPricing {
  /** The cost the price is made from when it is more than the plan's own: a dearer plan earlier in the walk, or the always-admit floor. */
  pricedCost: number;
  /** The plan is the always-admit one, priced at least at the highest possible cost at every amount of work. */
  alwaysAdmit: boolean;
}

/**
 * The quote for an admitted plan. `charge`: a share policy's own charge. `menu`: how the miserly
 * menu priced it; its plans are also priced at least at the highest possible cost at any amount
 * of work that would take them past the usage bounds (pricesAtWork).
 */
export function quoteOf(state: MarketState, job: Job, plan: Plan, now: number, charge?: number, menu?: MenuPricing): Quote {
  const s = state.settings;
  const placed = placedWork(state, job, plan, now);
  const benefit = benefitAt(job.benefit, plan.completionAt - job.arrivedAt);
  const producerPayments = placed.payments;
  const congestion = Math.max(0, plan.cost - producerPayments);
  let price: number;
  let priceParts: Quote["priceParts"];
  if (s.pricing === "bid") {
    price = benefit;
    priceParts = { producerPayments, congestion, fee: benefit - plan.cost };
  } else {
    // A share policy's own charge (its reason's expected charge) stands in for the marginal cost.
    const base = charge ?? Math.max(plan.cost, menu?.pricedCost ?? 0) * (1 + s.feeFraction);
    price = Math.max(0, Math.min(benefit, base));
    priceParts = { producerPayments, congestion, fee: price - producerPayments - congestion };
  }
  const floor = menu ? { demand: demandOf(job), from: menu.alwaysAdmit ? 1 : placed.boundRatio } : undefined;
  return { price, priceParts, priceAtWork: pricesAtWork(state, plan, placed, now, price, floor) };
}

/** Multiples of the declared work at which an admitted plan is priced again (Admitted.priceAtWork). */
export const WORK_RATIOS: readonly number[] = [1, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10, 30, 100, 1000];

/** Each placement's machine row and task work, in the plan's order, and what they imply. */
interface PlacedWork {
  /** How many placements and machines the arrays below hold (they are scratch, longer than that). */
  placements: number;
  used: number;
  rows: Int32Array;
  /** cps(m) x w / v_m summed: what the plan expects to pay producers. */
  payments: number;
  /** Per machine the plan uses (in the order of its first placement): its row, its backlog R and the job's work W on it. */
  machines: Int32Array;
  backlog: Float64Array;
  own: Float64Array;
  /** finish(ratio) = fixed + ratio x scaled, per placement (feasibility.ts, estimate). */
  fixed: Float64Array;
  scaled: Float64Array;
  /** The ratio of the work past which some task of the plan would break the usage bounds (feasibility.ts). */
  boundRatio: number;
}

// Each machine row's place among the machines of the plan being quoted, stamped so it needs no
// clearing, and the arrays a quote works in, grown as needed: every admission is quoted, and
// allocating them each time was most of what a quote cost (decisions are synchronous, as the
// search's overlay).
let slotStamp = new Int32Array(64);
let slotOfRow = new Int32Array(64);
let stampNow = 0;
class Scratch {
  rows = new Int32Array(64);
  machines = new Int32Array(64);
  backlog = new Float64Array(64);
  own = new Float64Array(64);
  count = new Int32Array(64);
  fixed = new Float64Array(64);
  scaled = new Float64Array(64);
  base = new Float64Array(64);
  slope = new Float64Array(64);

  grow(n: number): void {
    if (this.rows.length >= n) return;
    const size = Math.max(n, this.rows.length * 2);
    this.rows = new Int32Array(size);
    this.machines = new Int32Array(size);
    this.backlog = new Float64Array(size);
    this.own = new Float64Array(size);
    this.count = new Int32Array(size);
    this.fixed = new Float64Array(size);
    this.scaled = new Float64Array(size);
    this.base = new Float64Array(size);
    this.slope = new Float64Array(size);
  }
}
const scratch = new Scratch();

function placedWork(state: MarketState, job: Job, plan: Plan, now: number): PlacedWork {
  const m = state.machines;
  const f = m.f;
  const H = state.settings.horizonSeconds;
  const placements = plan.placements;
  const n = placements.length;
  // A job's tasks mostly share one work figure (the market declares one per job): then no lookup by id.
  const first = job.tasks[0]!.work;
  let byId: Map<string, number> | undefined;
  for (const t of job.tasks) {
    if (t.work !== first) {
      byId = new Map(job.tasks.map((x) => [x.id, x.work]));
      break;
    }
  }
  if (slotStamp.length < m.end) {
    slotStamp = new Int32Array(Math.max(m.end, slotStamp.length * 2));
    slotOfRow = new Int32Array(slotStamp.length);
  }
  if (++stampNow === 0x7fffffff) {
    slotStamp.fill(0);
    stampNow = 1;
  }
  scratch.grow(n);
  const { rows, machines, backlog, own, count, fixed, scaled } = scratch;
  own.fill(0, 0, n);
  count.fill(0, 0, n);
  let used = 0;
  let payments = 0;
  let boundRatio = Infinity;
  for (let i = 0; i < n; i++) {
    const p = placements[i]!;
    const row = m.rowById.get(p.machineId) ?? -1;
    rows[i] = row;
    if (row < 0) continue;
    // The part before the first "~": replica r >= 1 of task t is `${t}~${r}` (expandTasks).
    let w = first;
    if (byId) {
      const cut = p.taskId.indexOf("~");
      w = byId.get(cut < 0 ? p.taskId : p.taskId.slice(0, cut)) ?? 0;
    }
    let k: number;
    if (slotStamp[row] === stampNow) k = slotOfRow[row]!;
    else {
      k = used++;
      slotStamp[row] = stampNow;
      slotOfRow[row] = k;
      machines[k] = row;
      backlog[k] = m.remaining(row, now);
    }
    const capacity = f.capacity[row]!;
    const speed = f.speed[row]!;
    const E = own[k]!;
    payments += (f.pricePerSecond[row]! * w) / speed;
    // As feasibility.ts: a task starts at once while a slot is free, otherwise after the backlog.
    const startsNow = m.i.running[row]! + m.i.queued[row]! + count[k]! < f.slots[row]!;
    const line = (startsNow ? 0 : E / capacity) + w / speed;
    scaled[i] = line;
    fixed[i] = p.expectedFinishAt - line;
    // The bounded check of feasibility.ts, (R + r E) / c + min(r w / c, H / 2) <= H for the backlog
    // R, the job's own work E before this task and the task's w, holds up to this ratio r.
    const bound = withinBoundsUpTo(backlog[k]!, E, w, capacity, H);
    if (bound < boundRatio) boundRatio = bound;
    own[k] = E + w;
    count[k]!++;
  }
  return { placements: n, used, rows, payments, machines, backlog, own, fixed, scaled, boundRatio };
}

/**
 * The largest ratio r for which (R + r E) / c + min(r w / c, H / 2) <= H: the bounded check of
 * feasibility.ts for a task of work w behind backlog R and the job's own work E on a machine of
 * capacity c, with every task's work r times the declared. Below 1 when it fails already.
 */
function withinBoundsUpTo(R: number, E: number, w: number, c: number, H: number): number {
  // While the task's own share is under H/2 the check is R + r (E + w) <= H c.
  const share = (H * c) / (2 * w);
  const whole = (H * c - R) / (E + w);
  if (whole <= share) return whole;
  // Past that its share counts H/2: R + r E <= H c / 2.
  if (E === 0) return R <= (H * c) / 2 ? Infinity : share;
  return Math.max(share, ((H * c) / 2 - R) / E);
}

/** Where the highest possible cost starts to floor a plan's price (pricesAtWork). */
interface Floor {
  demand: Demand;
  from: number;
}

/**
 * The admitted plan at each of WORK_RATIOS times the declared work, on the same placements and the
 * market as it is at admission. The price grows by (1 + fee under posted prices) times what the
 * extra work adds to the plan's marginal cost: on each machine the compute term
 * P x (n^((R + W)/(c H)) - n^(R/(c H))) of the job's work W over its backlog R (the sum of its
 * tasks' marginal costs there, in any order), and the producers' payments; memory and the link do
 * not depend on the work. Each task's finish moves by its own extra run time, plus that of the
 * job's tasks queued before it on its machine (feasibility.ts, estimate). Both are convex in the
 * ratio (sums of exponentials; a maximum of lines), so reading between two ratios linearly
 * (chargeForWork) never charges less, nor excuses less lateness, than the plan at that work.
 *
 * `floor`: a plan of the miserly menu is priced at least at the highest possible cost of the job
 * at that work from the ratio where its tasks would break the usage bounds on (at once for the
 * always-admit plan). The menu offers no plan past the bounds for less: without the floor, a
 * consumer who declared too little work was planned within the bounds and then ran past them at
 * the marginal cost, where the truth would have been delayed or priced at the floor.
 */
function pricesAtWork(state: MarketState, plan: Plan, placed: PlacedWork, now: number, price: number, floor: Floor | undefined): WorkPrice[] {
  const f = state.machines.f;
  const s = state.settings;
  const lnN = Math.log(state.n);
  const H = s.horizonSeconds;
  const markup = s.pricing === "posted" ? 1 + s.feeFraction : 1;
  // The step where the floor starts: the ratio itself, priced without it, and one just past it.
  const step = floor && floor.from > 1 && floor.from < WORK_RATIOS[WORK_RATIOS.length - 1]! ? floor.from : Infinity;
  // Per machine: P n^((R + W)/(c H)) and ln(n) W / (c H), so each ratio costs one expm1 per machine.
  const used = placed.used;
  const { base, slope } = scratch;
  for (let k = 0; k < used; k++) {
    const scale = f.capacity[placed.machines[k]!]! * H;
    base[k] = s.priceConstant * Math.exp((lnN * (placed.backlog[k]! + placed.own[k]!)) / scale);
    slope[k] = (lnN * placed.own[k]!) / scale;
  }
  const out: WorkPrice[] = [{ ratio: 1, price, completionAt: plan.completionAt }];
  for (let r = 1; r < WORK_RATIOS.length; r++) {
    const ratio = WORK_RATIOS[r]!;
    if (step > WORK_RATIOS[r - 1]! && step <= ratio) {
      const past = step * (1 + 1e-9);
      out.push(workPrice(state, plan, placed, price, markup, floor, step), workPrice(state, plan, placed, price, markup, floor, past));
      if (past >= ratio) continue;
    }
    out.push(workPrice(state, plan, placed, price, markup, floor, ratio));
  }
  return out;
}

/** The plan at one ratio of its declared work (pricesAtWork). */
function workPrice(state: MarketState, plan: Plan, placed: PlacedWork, price: number, markup: number, floor: Floor | undefined, ratio: number): WorkPrice {
  const { base, slope } = scratch;
  let extra = (ratio - 1) * placed.payments;
  for (let k = 0; k < placed.used; k++) extra += base[k]! * Math.expm1(slope[k]! * (ratio - 1));
  let p = price + markup * extra;
  if (floor && ratio > floor.from) p = Math.max(p, highestCostOf(state, floor.demand, ratio));
  const { rows, fixed, scaled } = placed;
  let completionAt = plan.completionAt;
  for (let i = 0; i < placed.placements; i++) {
    const finish = fixed[i]! + ratio * scaled[i]!;
    if (rows[i]! >= 0 && finish > completionAt) completionAt = finish;
  }
  // Past every budget: kept finite so the decision stays a plain record.
  return { ratio, price: Math.min(MAX_CREDITS, p), completionAt };
}

/** The price or completion at `ratio`, read linearly between the two ratios around it, or along the last two past the end. */
function atRatio(points: readonly WorkPrice[], ratio: number, field: "price" | "completionAt"): number {
  if (points.length === 0) return NaN;
  if (ratio <= points[0]!.ratio || points.length === 1) return points[0]![field];
  let i = 1;
  while (i < points.length - 1 && points[i]!.ratio < ratio) i++;
  const a = points[i - 1]!;
  const b = points[i]!;
  return a[field] + ((b[field] - a[field]) * (ratio - a.ratio)) / (b.ratio - a.ratio);
}

/**
 * What the admitted plan costs at `ratio` times its declared work: priceAtWork read between its
 * points, and in proportion past the last of them. Never below the quote (ratio 1).
 */
export function priceAtRatio(points: readonly WorkPrice[], ratio: number): number {
  if (points.length === 0) return NaN;
  const last = points[points.length - 1]!;
  const price = ratio > last.ratio ? (last.price * ratio) / last.ratio : atRatio(points, Math.max(ratio, points[0]!.ratio), "price");
  return Math.max(points[0]!.price, price);
}

export interface WorkChargeInput {
  /** The market's pricing rule when the job was admitted. */
  pricing: "posted" | "bid";
  /** The admitted decision's price, planned completion, and its priceAtWork. */
  price: number;
  completionAt: number;
  priceAtWork: readonly WorkPrice[];
  /** Work the job declared for its tasks, and the work the market measured for the same tasks. */
  declaredWork: number;
  measuredWork: number;
  /** Measured work up to this multiple of the declared still holds the estimate (at least 1). */
  toleranceMultiple: number;
  /** The reported benefit curve, the job's arrival and its actual completion (seconds, the market's clock). */
  benefit: BenefitCurve;
  arrivedAt: number;
  completedAt: number;
  /** The most the consumer agreed to be charged; unset, no limit. */
  maxSpend?: number | undefined;
}

export interface WorkCharge {
  /** What the consumer is charged: `due`, never past maxSpend. */
  charge: number;
  /** What the rules give before maxSpend. */
  due: number;
  /** Measured over declared work. */
  ratio: number;
  /** The measured work is over the tolerance: the charge is the plan priced at the measured work. */
  contradicted: boolean;
  /**
   * `due` passes maxSpend: the job could not be completed at its price within what the consumer
   * agreed to. The market must stop such a job before it completes, or maxSpend becomes a cap
   * under which declaring too little work pays.
   */
  overMaxSpend: boolean;
  /** Lateness the measured work explains, seconds: the consumer's own, never a reason to charge less. */
  consumerDelaySeconds: number;
  /** The benefit the charge may fall to for the market's own lateness: b(completedAt - consumerDelaySeconds). */
  benefit: number;
}

/**
 * What a completed job is charged under the work it declared and the work the market measured.
 *
 * - The quote is the price while the measured work is within `toleranceMultiple` of the declared
 *   (or below it: a consumer who declared too much pays the quote they accepted).
 * - Past the tolerance the estimate is contradicted and the charge is the admitted plan priced at
 *   the measured work (Admitted.priceAtWork, read linearly between ratios): the quote plus
 *   (1 + fee) times the marginal cost the extra work adds on the same machines. A charge in
 *   proportion to the work (quote x measured / declared) is not enough: cost is convex in work
 *   (n^(usage/max)), so a consumer who declared half their work and was scaled up would pay less
 *   than the honest quote.
 * - Either way the quote part may fall to the reported benefit for the market's own lateness
 *   (posted pricing; under bid the charge is that benefit), read at the actual completion less
 *   the lateness the measured work explains. Read at the actual completion itself, a consumer
 *   who declared too little work and reported a curve that falls just after the planned
 *   completion would pay almost nothing.
 * - Never more than maxSpend; `overMaxSpend` says when the rules would have asked for more.
 *
 * A tolerance above 1 leaves a gain: declaring the work over the tolerance saves at most
 * toleranceGain(...) (the plan priced at the tolerance less the quote); with a tolerance of 1 no
 * work report gains anything (pricing.test.ts).
 */
export function chargeForWork(c: WorkChargeInput): WorkCharge {
  const declared = Math.max(0, c.declaredWork);
  const measured = Math.max(0, c.measuredWork);
  const ratio = declared > 0 ? measured / declared : measured > 0 ? Infinity : 1;
  const tolerance = Math.max(1, c.toleranceMultiple);
  const contradicted = ratio > tolerance;
  const at = Number.isFinite(ratio) ? ratio : WORK_RATIOS[WORK_RATIOS.length - 1]!;
  const consumerDelaySeconds = ratio > 1 ? Math.max(0, atRatio(c.priceAtWork, at, "completionAt") - c.completionAt) : 0;
  const benefit = benefitAt(c.benefit, c.completedAt - consumerDelaySeconds - c.arrivedAt);
  const quoted = c.pricing === "posted" ? Math.min(Math.max(0, c.price), Math.max(0, benefit)) : Math.max(0, benefit);
  const extra = contradicted ? (Number.isFinite(ratio) ? Math.max(0, atRatio(c.priceAtWork, ratio, "price") - c.price) : Infinity) : 0;
  const due = quoted + extra;
  const limit = c.maxSpend === undefined ? Infinity : Math.max(0, c.maxSpend);
  return { charge: Math.min(due, limit), due, ratio, contradicted, overMaxSpend: due > limit, consumerDelaySeconds, benefit };
}

/**
 * The most a consumer can gain from the tolerance: declaring 1 / toleranceMultiple of their work
 * is still charged the quote, where the plan at the work they ran costs this much more.
 */
export function toleranceGain(priceAtWork: readonly WorkPrice[], price: number, toleranceMultiple: number): number {
  return Math.max(0, atRatio(priceAtWork, Math.max(1, toleranceMultiple), "price") - price);
}
