// Posted prices are a menu: no report of the benefit curve or of the work gives the consumer more
// than the truth (README "Pricing rules"). The search builds markets of 1-20 machines with memory
// limits and backlogs and jobs of 1-30 tasks with memory demands, and tries misreports of the
// curve, of the work and of both. Its seed is printed; PRICING_SEED=<seed> replays a run.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { benefitAt, type BenefitCurve } from "./benefit.ts";
import { createRng, type Rng } from "./rng.ts";
import { createPolicy } from "./policies/policy.ts";
import { menuOfPlans } from "./policies/miserly.ts";
import { job, market, opp } from "./test-fixtures.ts";
import type { Admitted, Decision } from "./decision.ts";
import type { Job } from "./job.ts";
import type { MarketState } from "./state/market-state.ts";
import { createContext } from "./pipeline/context.ts";
import { estimate } from "./pipeline/feasibility.ts";
import { buildPlan, expandTasks } from "./pipeline/plan.ts";
import { cheapestMachine } from "./pipeline/selection.ts";
import { chargeForWork, surplus, toleranceGain, WORK_RATIOS } from "./pricing.ts";

const miserly = createPolicy("miserly");
/** The same policy with a walk long enough to hold every plan of these jobs (tasks x machines). */
const wholeWalk = createPolicy("miserly", { maxCandidateTimes: 1000 });
const rng = createRng(1);

interface MachineSpec {
  speed: number;
  slots: number;
  memoryPerSlotMb: number;
  pricePerSecond: number;
  /** Tasks already on the machine: work, memory, and whether it runs. */
  load: { work: number; memoryMb: number; running: boolean }[];
}

interface Scenario {
  machines: MachineSpec[];
  horizonSeconds: number;
  priceConstant: number;
  feeFraction: number;
  /** Each task's true work and memory. */
  tasks: { work: number; memoryMb: number }[];
}

const logUniform = (r: Rng, lo: number, hi: number) => Math.exp(r.uniform(Math.log(lo), Math.log(hi)));

/** A market of 1-20 machines, some near or past their bounds, and a job of 1-30 tasks; most jobs' tasks alike, as the market submits them. */
function scenario(r: Rng): Scenario {
  const horizonSeconds = r.uniform(20, 300);
  const machines = Array.from({ length: 1 + r.int(20) }, (): MachineSpec => {
    const speed = logUniform(r, 0.2, 3);
    const slots = 1 + r.int(4);
    const memoryPerSlotMb = [128, 256, 512, 1024, 2048][r.int(5)]!;
    const pricePerSecond = r.next() < 0.2 ? 0 : r.uniform(0, 2) * (r.next() < 0.5 ? speed : 1);
    const n = r.int(4);
    const load = Array.from({ length: n }, (_, i) => ({ work: Math.max(1e-3, (r.uniform(0, 1.2) * horizonSeconds * speed * slots) / Math.max(1, n)), memoryMb: r.next() < 0.5 ? 0 : r.uniform(0, memoryPerSlotMb), running: i < slots }));
    return { speed, slots, memoryPerSlotMb, pricePerSecond, load };
  });
  const count = 1 + r.int(30);
  const alike = r.next() < 0.7;
  const work = logUniform(r, 0.5, 80);
  const memoryMb = r.next() < 0.4 ? 0 : r.uniform(0, 600);
  const tasks = Array.from({ length: count }, () => (alike ? { work, memoryMb } : { work: logUniform(r, 0.5, 80), memoryMb: r.next() < 0.4 ? 0 : r.uniform(0, 600) }));
  return { machines, horizonSeconds, priceConstant: logUniform(r, 0.01, 5), feeFraction: r.next() < 0.2 ? 0 : 0.1, tasks };
}

function build(sc: Scenario): MarketState {
  const s = market(
    sc.machines.map((m, i) => opp(`m${i}`, { speed: m.speed, slots: m.slots, memoryPerSlotMb: m.memoryPerSlotMb, pricePerSecond: m.pricePerSecond })),
    { horizonSeconds: sc.horizonSeconds, priceConstant: sc.priceConstant, feeFraction: sc.feeFraction },
  );
  sc.machines.forEach((m, i) =>
    m.load.forEach((l, k) => {
      s.assignTask({ id: `load-${i}-${k}`, jobId: "load", work: l.work, memoryMb: Math.min(l.memoryMb, m.memoryPerSlotMb), bytes: 0 }, `m${i}`, 0);
      if (l.running) s.taskStarted(`load-${i}-${k}`, 0);
    }),
  );
  return s;
}

/** The job as declared: its curve, and each task's work `k` times the truth. */
function jobOf(sc: Scenario, curve: BenefitCurve, k = 1): Job {
  return job("j", curve, sc.tasks.map((t) => ({ work: t.work * k, memoryMb: t.memoryMb })));
}

/** Cost and completion of the greedy plan without a deadline (past the bounds if need be): the scale of the curves. */
function scale(sc: Scenario): { cost: number; at: number } {
  const s = build(sc);
  const ctx = createContext(s, 0);
  const groups = expandTasks(jobOf(sc, { kind: "constant", value: 0 }));
  let r = buildPlan(ctx, groups, Infinity);
  if (!r.ok) {
    ctx.bounded = false;
    r = buildPlan(ctx, groups, Infinity);
  }
  return r.ok ? { cost: Math.min(1e9, Math.max(1e-3, r.plan.cost)), at: Math.max(1, r.plan.completionAt) } : { cost: 1, at: 100 };
}

function curve(r: Rng, cost: number, at: number): BenefitCurve {
  const value = cost * logUniform(r, 0.3, 6);
  const t = () => at * logUniform(r, 0.1, 4);
  switch (r.int(4)) {
    case 0:
      return { kind: "constant", value };
    case 1:
      return { kind: "deadline", value, deadline: t(), penalty: r.next() < 0.5 ? 0 : -r.uniform(0, value) };
    case 2: {
      const [a, b] = [t(), t()].sort((x, y) => x - y) as [number, number];
      return { kind: "linear-decay", value, start: r.next() < 0.3 ? 0 : a, end: b + 1e-6, floor: r.next() < 0.5 ? 0 : -r.uniform(0, value) };
    }
    default: {
      const times = Array.from({ length: 2 + r.int(4) }, t).sort((x, y) => x - y);
      let v = value;
      return { kind: "piecewise", points: times.map((time, i) => ({ t: time, value: i === 0 ? v : (v -= r.uniform(0, value / times.length)) })) };
    }
  }
}

/** The misreports: the curve scaled, stretched, an invented deadline or decay, or any other curve. */
function lie(r: Rng, truth: BenefitCurve, cost: number, at: number): BenefitCurve {
  const top = benefitAt(truth, 0);
  switch (r.int(5)) {
    case 0:
      return scaled(truth, logUniform(r, 0.05, 4));
    case 1:
      return stretched(truth, logUniform(r, 0.1, 3));
    case 2:
      return { kind: "deadline", value: top * (r.next() < 0.5 ? 1 : r.uniform(0.5, 3)), deadline: at * logUniform(r, 0.05, 3) };
    case 3: {
      const start = at * r.uniform(0, 2);
      return { kind: "linear-decay", value: top, start, end: start + at * r.uniform(0.01, 3), floor: 0 };
    }
    default:
      return curve(r, cost, at);
  }
}

function scaled(c: BenefitCurve, k: number): BenefitCurve {
  switch (c.kind) {
    case "constant": return { ...c, value: c.value * k };
    case "deadline": return { ...c, value: c.value * k, penalty: (c.penalty ?? 0) * k };
    case "linear-decay": return { ...c, value: c.value * k, floor: c.floor * k };
    case "piecewise": return { ...c, points: c.points.map((p) => ({ ...p, value: p.value * k })) };
  }
}

function stretched(c: BenefitCurve, k: number): BenefitCurve {
  switch (c.kind) {
    case "constant": return c;
    case "deadline": return { ...c, deadline: c.deadline * k };
    case "linear-decay": return { ...c, start: c.start * k, end: c.end * k };
    case "piecewise": return { ...c, points: c.points.map((p) => ({ ...p, t: p.t * k })) };
  }
}

/** A work misreport: close to the truth (within a tolerance) or far from it, under or over. */
function workLie(r: Rng): number {
  const near = [0.9, 0.95, 0.99, 0.999, 1.001, 1.01, 1.05, 1.1];
  return r.next() < 0.35 ? near[r.int(near.length)]! : logUniform(r, 0.05, 5);
}

/**
 * When an admitted plan completes if each task's work is `ratio` times what it declared: the same
 * placements, in the same order, each task's finish worked out by the planner's own estimate.
 */
function completionAtWork(s: MarketState, j: Job, d: Admitted, ratio: number): number {
  const ctx = createContext(s, 0);
  const tasks = new Map(j.tasks.map((t) => [t.id, t]));
  const est = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  let at = 0;
  for (const p of d.placements) {
    const t = tasks.get(p.taskId)!;
    const row = s.rowOf(p.machineId)!;
    const shape = { id: p.taskId, work: t.work * ratio, memoryMb: t.memoryMb, bytes: t.bytes };
    estimate(ctx, row, shape, est);
    at = Math.max(at, est.finishAt);
    ctx.overlay.add(row, shape.work, shape.memoryMb, shape.bytes);
  }
  ctx.overlay.clear();
  return at;
}

/** A job decided as reported (its curve `reported`, `k` times its true work) and where it completes with its true work. */
function decide(sc: Scenario, policy: typeof miserly, reported: BenefitCurve, k: number) {
  const s = build(sc);
  const j = jobOf(sc, reported, k);
  const d = policy.admit(s, j, 0, rng);
  const ratio = 1 / k;
  const completedAt = d.outcome !== "admitted" ? NaN : ratio === 1 ? d.completionAt : completionAtWork(s, j, d, ratio);
  return { d, reported, ratio, completedAt, declaredWork: j.tasks.reduce((a, t) => a + t.work, 0) };
}

type Charging = "rule" | "proportional" | "benefit-at-completion";

/**
 * The consumer's true gain: b(actual completion) - charge, 0 if not admitted. `tolerance`:
 * chargeForWork's. `charging`: the rule, or one of two rules it replaced (the search must find
 * their gains): the quote in proportion to the work, or any charge lowered to the reported
 * benefit at the actual completion.
 */
function gain(x: ReturnType<typeof decide>, truth: BenefitCurve, tolerance = 1, charging: Charging = "rule") {
  const d = x.d;
  if (d.outcome !== "admitted") return { gain: 0, leak: 0, contradicted: false, alwaysAdmit: false };
  const c = chargeForWork({ pricing: "posted", price: d.price, completionAt: d.completionAt, priceAtWork: d.priceAtWork!, declaredWork: x.declaredWork, measuredWork: x.declaredWork * x.ratio, toleranceMultiple: tolerance, benefit: x.reported, arrivedAt: 0, completedAt: x.completedAt });
  const atCompletion = Math.max(0, benefitAt(x.reported, x.completedAt));
  const charge = charging === "proportional" ? Math.min(d.price, atCompletion) * Math.max(1, x.ratio) : charging === "benefit-at-completion" ? Math.min(c.charge, atCompletion) : c.charge;
  return { gain: benefitAt(truth, x.completedAt) - charge, leak: toleranceGain(d.priceAtWork!, d.price, tolerance), contradicted: c.contradicted, alwaysAdmit: d.reasons[0]!.code === "always-admit" };
}

const alike = (sc: Scenario) => sc.tasks.every((t) => t.work === sc.tasks[0]!.work && t.memoryMb === sc.tasks[0]!.memoryMb);
const code = (d: Decision) => d.reasons[0]!.code;
const pays = (gain: number, honest: number, allowed = 0) => gain > honest + allowed + 1e-9 * (1 + Math.abs(gain) + Math.abs(honest));

describe("posted prices are truthful for real jobs", () => {
  it("no misreport of the curve or of the work gives the consumer more true gain than the truth (5,000 markets)", () => {
    const seed = Number(process.env.PRICING_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`pricing search seed ${seed} (replay: PRICING_SEED=${seed})`);
    const seen = { cases: 0, alike: 0, curveLies: 0, workLies: 0, alwaysAdmitLies: 0, contradicted: 0, premium: 0, toleranceGains: 0, proportionalGains: 0, benefitAtCompletionGains: 0 };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (caseSeed) => {
        const r = createRng(caseSeed);
        const sc = scenario(r);
        const { cost, at } = scale(sc);
        const truth = curve(r, cost, at);
        seen.cases++;

        // The curve, on the market's own policy: every job, its tasks alike or not.
        const honest = decide(sc, miserly, truth, 1);
        const truthGain = gain(honest, truth).gain;
        for (let l = 0; l < 2; l++) {
          const x = gain(decide(sc, miserly, lie(r, truth, cost, at), 1), truth);
          seen.curveLies++;
          if (x.alwaysAdmit) seen.alwaysAdmitLies++;
          if (pays(x.gain, truthGain)) throw new Error(`case ${caseSeed}: a misreported curve gains ${x.gain} against the truth's ${truthGain}`);
        }
        // The walk stops early only where no plan further on could be chosen: the choice is the whole walk's.
        const d = honest.d;
        if (d.outcome === "admitted" && code(d) === "profitable") {
          const s = build(sc);
          const whole = menuOfPlans(createContext(s, 0), expandTasks(jobOf(sc, truth)), cheapestMachine, miserly.profile.maxCandidateTimes, () => false);
          let best = -Infinity;
          for (const item of whole.items) best = Math.max(best, surplus(s.settings, benefitAt(truth, item.plan.completionAt), item.pricedCost));
          expect(truthGain).toBeCloseTo(best, 9);
          if (d.price > (1 + sc.feeFraction) * d.marginalCost * (1 + 1e-12) + 1e-12) seen.premium++;
        }

        // The work, and the work and the curve together: jobs whose tasks are alike, on a walk
        // that holds every plan (README "Pricing rules" says what is left outside these).
        if (!alike(sc)) return;
        seen.alike++;
        const truthful = gain(decide(sc, wholeWalk, truth, 1), truth).gain;
        for (let l = 0; l < 4; l++) {
          const k = workLie(r);
          const x = decide(sc, wholeWalk, l % 2 === 0 ? truth : lie(r, truth, cost, at), k);
          const strict = gain(x, truth);
          seen.workLies++;
          if (strict.contradicted) seen.contradicted++;
          if (pays(strict.gain, truthful)) throw new Error(`case ${caseSeed}: declaring ${k} times the work gains ${strict.gain} against the truth's ${truthful}`);
          // A tolerance of 10% keeps the quote for a declaration that low: the gain stays within its bound.
          const tolerant = gain(x, truth, 1.1);
          if (pays(tolerant.gain, truthful, tolerant.leak)) throw new Error(`case ${caseSeed}: within the tolerance, declaring ${k} times the work gains ${tolerant.gain - truthful}, more than the bound ${tolerant.leak}`);
          if (pays(tolerant.gain, truthful)) seen.toleranceGains++;
          if (pays(gain(x, truth, 1, "proportional").gain, truthful)) seen.proportionalGains++;
          if (pays(gain(x, truth, 1, "benefit-at-completion").gain, truthful)) seen.benefitAtCompletionGains++;
        }
      }),
      { numRuns: 5000, seed },
    );
    console.log(`pricing search: ${JSON.stringify(seen)}`);
    // The search reaches what it is about: the always-admit rule, contradicted estimates, plans
    // priced above their cost by the walk, and the gains of the rules this one replaced.
    expect(seen.cases).toBe(5000);
    expect(seen.alike).toBeGreaterThan(3000);
    expect(seen.alwaysAdmitLies).toBeGreaterThan(0);
    expect(seen.contradicted).toBeGreaterThan(1000);
    expect(seen.premium).toBeGreaterThan(0);
    expect(seen.toleranceGains).toBeGreaterThan(0);
    expect(seen.proportionalGains).toBeGreaterThan(0);
    expect(seen.benefitAtCompletionGains).toBeGreaterThan(0);
  }, 600_000);

  it("under pay-as-bid a misreport pays: the same search finds one", () => {
    let found = false;
    for (let c = 0; c < 500 && !found; c++) {
      const r = createRng(`bid-${c}`);
      const sc = scenario(r);
      const { cost, at } = scale(sc);
      const truth = curve(r, cost, at);
      const bid = (b: BenefitCurve) => {
        const s = market(sc.machines.map((m, i) => opp(`m${i}`, { speed: m.speed, slots: m.slots, memoryPerSlotMb: m.memoryPerSlotMb, pricePerSecond: m.pricePerSecond })), { pricing: "bid", horizonSeconds: sc.horizonSeconds, priceConstant: sc.priceConstant });
        const d = miserly.admit(s, jobOf(sc, b), 0, rng);
        return d.outcome === "admitted" ? benefitAt(truth, d.completionAt) - d.price : 0;
      };
      found = pays(bid(lie(r, truth, cost, at)), bid(truth));
    }
    expect(found).toBe(true);
  });

  it("a consumer who invents a deadline gets no plan the truth was not offered", () => {
    // Two machines: a slow free one and a fast dear one. The true curve decays slowly; inventing
    // a deadline between the two finishes used to add a candidate time; the menu now has both.
    const sc: Scenario = { machines: [{ speed: 0.25, slots: 1, memoryPerSlotMb: 1024, pricePerSecond: 0, load: [] }, { speed: 1, slots: 1, memoryPerSlotMb: 1024, pricePerSecond: 0.5, load: [] }], horizonSeconds: 100, priceConstant: 1, feeFraction: 0.1, tasks: [{ work: 10, memoryMb: 0 }] };
    const truth: BenefitCurve = { kind: "linear-decay", value: 30, start: 0, end: 100, floor: 0 };
    const honest = decide(sc, miserly, truth, 1);
    const lied = decide(sc, miserly, { kind: "deadline", value: 30, deadline: 15 }, 1);
    expect(honest.d.outcome).toBe("admitted");
    expect(gain(lied, truth).gain).toBeLessThanOrEqual(gain(honest, truth).gain + 1e-9);
    // The truth is served by the fast machine: 27 credits at 10 s for a price of about 5.6, against 18 at 40 s on the slow one.
    expect(honest.d.outcome === "admitted" && honest.d.completionAt).toBeCloseTo(10);
  });
});

describe("the charge for the work", () => {
  // One machine at 1 credit per second, P = 1, H = 100: a job of two tasks of 10 work units.
  const s = () => market([opp("a", { pricePerSecond: 1, slots: 2 })], { horizonSeconds: 100, priceConstant: 1 });
  const flat: BenefitCurve = { kind: "constant", value: 1000 };
  const admit = (work: number, benefit: BenefitCurve = flat) => {
    const d = miserly.admit(s(), job("j", benefit, [{ work }, { work }]), 0, rng);
    if (d.outcome !== "admitted") throw new Error("not admitted");
    return d;
  };
  const charge = (d: Admitted, declared: number, measured: number, more: Partial<Parameters<typeof chargeForWork>[0]> = {}) =>
    chargeForWork({ pricing: "posted", price: d.price, completionAt: d.completionAt, priceAtWork: d.priceAtWork!, declaredWork: declared, measuredWork: measured, toleranceMultiple: 1.1, benefit: flat, arrivedAt: 0, completedAt: d.completionAt, ...more });

  it("carries the plan priced at multiples of the declared work, the quote first", () => {
    const d = admit(10);
    const ratios = d.priceAtWork!.map((p) => p.ratio);
    expect(ratios).toEqual(expect.arrayContaining([...WORK_RATIOS]));
    expect(ratios).toEqual([...ratios].sort((a, b) => a - b));
    expect(d.priceAtWork![0]).toEqual({ ratio: 1, price: d.price, completionAt: d.completionAt });
    // Twice the work on the same machine: the same plan as a job that declared 20 per task.
    const twice = d.priceAtWork!.find((p) => p.ratio === 2)!;
    const honest = admit(20);
    expect(twice.price).toBeCloseTo(honest.price, 9);
    expect(twice.completionAt).toBeCloseTo(honest.completionAt, 9);
  });

  it("is the quote while the measured work is within the tolerance, or under the declared", () => {
    const d = admit(10);
    expect(charge(d, 20, 21.9).charge).toBe(d.price);
    expect(charge(d, 20, 5).charge).toBe(d.price);
    expect(charge(d, 20, 21.9).contradicted).toBe(false);
  });

  it("is the plan priced at the measured work once the estimate is contradicted: more than in proportion", () => {
    const d = admit(10);
    const c = charge(d, 20, 40);
    const honest = admit(20);
    expect(c.contradicted).toBe(true);
    expect(c.charge).toBeCloseTo(honest.price, 9);
    // Cost is convex in the work: the proportional charge would be less than the honest quote.
    expect(d.price * 2).toBeLessThan(honest.price);
    // Between two ratios it is read linearly: never less than the plan at that work.
    expect(charge(d, 20, 33).charge).toBeGreaterThanOrEqual(admit(16.5).price);
  });

  it("reads the benefit at the completion less the lateness the measured work explains", () => {
    // The reported curve falls to 0 just after the planned completion: declaring half the work and
    // reading the curve at the late completion would have made the job free.
    const d = admit(10);
    const cliff: BenefitCurve = { kind: "deadline", value: 1000, deadline: d.completionAt + 0.5 };
    const late = admit(20).completionAt;
    const c = charge(d, 20, 40, { benefit: cliff, completedAt: late });
    expect(c.consumerDelaySeconds).toBeCloseTo(late - d.completionAt, 6);
    expect(c.charge).toBeCloseTo(admit(20).price, 9);
    // The market's own lateness still lowers the charge to the benefit then.
    expect(charge(d, 20, 20, { benefit: cliff, completedAt: d.completionAt + 5 }).charge).toBe(0);
  });

  it("stops at maxSpend and says so", () => {
    const d = admit(10);
    const c = charge(d, 20, 40, { maxSpend: d.price * 1.5 });
    expect(c.charge).toBe(d.price * 1.5);
    expect(c.overMaxSpend).toBe(true);
    expect(charge(d, 20, 20, { maxSpend: d.price * 1.5 }).overMaxSpend).toBe(false);
  });

  it("bounds what the tolerance can be worth: the plan priced at the tolerance less the quote", () => {
    const d = admit(10);
    expect(toleranceGain(d.priceAtWork!, d.price, 1)).toBe(0);
    const leak = toleranceGain(d.priceAtWork!, d.price, 1.1);
    expect(leak).toBeCloseTo(d.priceAtWork!.find((p) => p.ratio === 1.1)!.price - d.price, 12);
    expect(leak).toBeGreaterThan(0.1 * d.price);
  });

  it("prices a plan that more work would take past the usage bounds at least at the highest possible cost", () => {
    // Free machine time, P = 10, H = 100 on two slots of speed 1: two tasks of 10 fit up to ten
    // times that work. Past it, the plan costs at least the highest possible cost of the job then:
    // P x (2^(1 + 400 / 200) - 2) = 60 at 20 times, where its own cost is P x (2^(400 / 200) - 1) = 30.
    const d = miserly.admit(market([opp("a", { slots: 2 })], { horizonSeconds: 100, priceConstant: 10 }), job("j", flat, [{ work: 10 }, { work: 10 }]), 0, rng);
    if (d.outcome !== "admitted") throw new Error("not admitted");
    const at = (ratio: number) => d.priceAtWork!.find((p) => p.ratio === ratio)!.price;
    expect(at(10)).toBeCloseTo(1.1 * 10 * (2 ** (200 / 200) - 1), 9);
    expect(at(30)).toBeCloseTo(10 * (2 ** (1 + 600 / 200) - 2), 9);
    expect(at(30)).toBeGreaterThan(1.1 * 10 * (2 ** (600 / 200) - 1));
  });
});
