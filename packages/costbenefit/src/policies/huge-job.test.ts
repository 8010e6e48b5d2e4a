// Deciding a job of many identical tasks takes shortcuts (one search for a run of identical tasks,
// plans written out only when read, the always-admit walk skipped or cut short once it cannot be
// admitted, bounds worked out once per task shape). These tests hold the decisions to those of the straightforward search, written
// out here as it was: every task copied, every plan placed in full.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { benefitAt, type BenefitCurve } from "../benefit.ts";
import type { Decision, Placement } from "../decision.ts";
import { resourceMarginalCost, unitsToCredits } from "../cost.ts";
import { Job } from "../job.ts";
import type { Reason } from "../reasons.ts";
import { createContext, type SearchContext } from "../pipeline/context.ts";
import type { TaskShape } from "../pipeline/feasibility.ts";
import type { Chooser, Plan, PlanResult } from "../pipeline/plan.ts";
import { linkHasRoom, networkCredits } from "../pipeline/scoring.ts";
import { emptyExclusions } from "../pipeline/selection.ts";
import { alwaysAdmitCost, surplus } from "../pricing.ts";
import { createRng } from "../rng.ts";
import type { MarketState } from "../state/market-state.ts";
import { market, opp } from "../test-fixtures.ts";
import { earliestCompletion, highestPossibleCost } from "./bounds.ts";
import { admitted, delayOrReject } from "./outcomes.ts";
import { chooserFor } from "./placement.ts";
import { createPolicy } from "./policy.ts";
import type { PolicyProfile } from "./profile.ts";

function expand(job: Job): TaskShape[][] {
  const groups = job.tasks.map((t) => Array.from({ length: job.replicas }, (_, r) => ({ id: r === 0 ? t.id : `${t.id}~${r}`, work: t.work, memoryMb: t.memoryMb, bytes: t.bytes })));
  return groups.sort((a, b) => b[0]!.work - a[0]!.work || (a[0]!.id < b[0]!.id ? -1 : 1));
}

function plan(ctx: SearchContext, groups: TaskShape[][], deadlineAt: number, choose: Chooser): PlanResult {
  ctx.overlay.clear();
  const placements: Placement[] = [];
  let cost = 0;
  let completionAt = ctx.now;
  for (const group of groups) {
    const used = group.length > 1 ? new Set<number>() : undefined;
    for (const task of group) {
      const linkOk = linkHasRoom(ctx, task);
      const why = emptyExclusions();
      const c = ctx.bounded && !linkOk ? undefined : choose(ctx, task, deadlineAt, used, why);
      if (!c) return { ok: false, reason: { code: "no-feasible-machine", taskId: task.id, deadlineAt: Number.isFinite(deadlineAt) ? deadlineAt : null, exclusions: why, linkFull: !linkOk } };
      const total = c.cost + networkCredits(ctx, task);
      ctx.overlay.add(c.row, task.work, task.memoryMb, task.bytes);
      if (used) for (const s of ctx.state.machines.sameOwner(c.row)) used.add(s);
      placements.push({ taskId: task.id, machineId: ctx.state.machines.ids[c.row]!, expectedFinishAt: c.finishAt, marginalCost: total });
      cost += total;
      completionAt = Math.max(completionAt, c.finishAt);
    }
  }
  ctx.overlay.clear();
  return { ok: true, plan: { placements, cost, completionAt } };
}

/** The walk of the miserly menu, every plan placed in full: priced costs never fall along it (miserly.ts). */
function walk(ctx: SearchContext, groups: TaskShape[][], choose: Chooser, profile: PolicyProfile, enough: (p: Plan) => boolean, floor: number, maxCost: number): { items: { plan: Plan; pricedCost: number }[]; failure?: Reason } {
  const items: { plan: Plan; pricedCost: number }[] = [];
  let priced = floor;
  let deadline = Infinity;
  for (let k = 0; k <= profile.maxCandidateTimes; k++) {
    const r = plan(ctx, groups, deadline, choose);
    if (!r.ok) return maxCost < Infinity ? { items } : { items, failure: r.reason };
    if (r.plan.cost > maxCost) break;
    priced = Math.max(priced, r.plan.cost);
    items.push({ plan: r.plan, pricedCost: priced });
    if (enough(r.plan)) break;
    deadline = r.plan.completionAt - 1e-9 * Math.max(1, Math.abs(r.plan.completionAt));
  }
  return { items };
}

/** The miserly decision as it was decided before the shortcuts. */
function straightforward(state: MarketState, job: Job, now: number, choose: Chooser, profile: PolicyProfile): Decision {
  if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
  const ctx = createContext(state, now, profile.minReputation);
  const groups = expand(job);
  const earliest = earliestCompletion(state, job, now);
  const top = benefitAt(job.benefit, earliest - 1e-9 * Math.max(1, Math.abs(earliest)) - job.arrivedAt);
  const enough = (p: Plan) => benefitAt(job.benefit, p.completionAt - job.arrivedAt) >= top;
  const menu = walk(ctx, groups, choose, profile, enough, -Infinity, Infinity);
  const plans = menu.items;
  const failure = menu.failure;
  let best: { plan: Plan; pricedCost: number; benefit: number; profit: number } | undefined;
  for (const p of plans) {
    const benefit = benefitAt(job.benefit, p.plan.completionAt - job.arrivedAt);
    const profit = surplus(state.settings, benefit, p.pricedCost);
    if (!best || profit > best.profit) best = { ...p, benefit, profit };
  }
  const highest = highestPossibleCost(state, job);
  const floor = Math.max(0, best?.profit ?? 0);
  if (top - highest > floor) {
    ctx.bounded = false;
    const over = walk(ctx, groups, choose, profile, enough, alwaysAdmitCost(state.settings, 0, highest), top);
    ctx.bounded = true;
    let chosen: { plan: Plan; pricedCost: number; benefit: number; profit: number } | undefined;
    for (const p of over.items) {
      const benefit = benefitAt(job.benefit, p.plan.completionAt - job.arrivedAt);
      const profit = surplus(state.settings, benefit, p.pricedCost);
      if (profit > (chosen?.profit ?? floor)) chosen = { ...p, benefit, profit };
    }
    if (chosen) return admitted(state, job, chosen.plan, now, [{ code: "always-admit", benefit: chosen.benefit, highestPossibleCost: highest, marginalCost: chosen.plan.cost }], { pricedCost: chosen.pricedCost, alwaysAdmit: true });
  }
  if (best && best.profit > 0) {
    return admitted(state, job, best.plan, now, [{ code: "profitable", benefit: best.benefit, marginalCost: best.plan.cost, profit: best.profit, completionAt: best.plan.completionAt, candidates: plans.length }], { pricedCost: best.pricedCost, alwaysAdmit: false });
  }
  const why: Reason = best
    ? { code: "unprofitable", benefit: best.benefit, marginalCost: best.plan.cost, completionAt: best.plan.completionAt, benefitNeeded: best.benefit - surplus(state.settings, best.benefit, best.pricedCost) }
    : (failure ?? { code: "no-machines" });
  const benefitAtEarliest = benefitAt(job.benefit, earliest - job.arrivedAt);
  const a = state.aggregates();
  let lowest = 0;
  for (const t of job.tasks) lowest += unitsToCredits(resourceMarginalCost(state.n, 0, state.settings.horizonSeconds, t.work / a.maxCapacity), state.settings.priceConstant);
  lowest *= job.replicas;
  if (benefitAtEarliest <= lowest) return { outcome: "rejected", jobId: job.id, reasons: [why, { code: "cannot-become-profitable", benefitAtEarliest, lowestPossibleCost: lowest, earliestCompletionAt: earliest }] };
  return delayOrReject(state, job, now, why);
}

const machineArb = fc.record({
  speed: fc.double({ min: 0.3, max: 3, noNaN: true }),
  slots: fc.integer({ min: 1, max: 4 }),
  memoryPerSlotMb: fc.constantFrom(128, 512, 2048),
  pricePerSecond: fc.double({ min: 0, max: 0.05, noNaN: true }),
  load: fc.double({ min: 0, max: 200, noNaN: true }),
  owner: fc.constantFrom("a", "b", "c", undefined),
});
const curveArb: fc.Arbitrary<BenefitCurve> = fc.oneof(
  fc.record({ kind: fc.constant("constant" as const), value: fc.double({ min: 0, max: 2000, noNaN: true }) }),
  fc.record({ kind: fc.constant("deadline" as const), value: fc.double({ min: 0, max: 2000, noNaN: true }), deadline: fc.double({ min: 1, max: 500, noNaN: true }) }),
  fc.record({ kind: fc.constant("linear-decay" as const), value: fc.double({ min: 1, max: 2000, noNaN: true }), start: fc.constant(5), end: fc.constant(400), floor: fc.constant(0) }),
);
const tasksArb = fc.record({
  count: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 32, max: 150 })),
  work: fc.double({ min: 0.01, max: 60, noNaN: true }),
  memoryMb: fc.constantFrom(0, 32, 200, 600),
  bytes: fc.constantFrom(0, 1024, 5e6),
  // Some jobs mix two task sizes.
  mixed: fc.constantFrom(false, false, true),
  replicas: fc.constantFrom(1, 1, 1, 2, 3),
  // Some jobs' tasks differ in bytes (task i adds i % 4 steps).
  bytesStep: fc.constantFrom(0, 0, 1, 5e5),
});

type MachineSpec = { speed: number; slots: number; memoryPerSlotMb: number; pricePerSecond: number; load: number; owner?: string | undefined };

function marketOf(ms: readonly MachineSpec[], settings: Parameters<typeof market>[1]): MarketState {
  const s = market(ms.map((m, i) => opp(`m${i}`, { speed: m.speed, slots: m.slots, memoryPerSlotMb: m.memoryPerSlotMb, pricePerSecond: m.pricePerSecond, ...(m.owner ? { owner: m.owner } : {}) })), settings);
  ms.forEach((m, i) => {
    if (m.load > 0) s.assignTask({ id: `bg${i}`, jobId: "bg", work: m.load * m.speed, memoryMb: 0, bytes: 0 }, `m${i}`, 0);
  });
  return s;
}

type TaskSpec = { count: number; work: number; memoryMb: number; bytes: number; mixed: boolean; replicas: number; bytesStep?: number };

function jobOf(t: TaskSpec, benefit: BenefitCurve, seed: number): Job {
  const r = createRng(seed);
  return Job.parse({
    id: "j",
    arrivedAt: 0,
    benefit,
    replicas: t.replicas,
    tasks: Array.from({ length: t.count }, (_, i) => ({ id: `${r.int(1e6).toString(36)}-${i}`, work: t.mixed && i % 3 === 0 ? t.work * 2 : t.work, memoryMb: t.memoryMb, bytes: t.bytes + (i % 4) * (t.bytesStep ?? 0) })),
  });
}

describe("deciding jobs of many identical tasks", () => {
  it("decides exactly as the straightforward search on random small markets (property)", () => {
    const outcomes = new Set<string>();
    fc.assert(
      fc.property(
        // Twins (same machine twice) tie on cost: the tie goes to the lower row either way.
        fc.array(machineArb, { minLength: 1, maxLength: 12 }).chain((ms) => fc.constantFrom(ms, [...ms, ...ms])),
        tasksArb,
        curveArb,
        fc.constantFrom("marginal-cost", "marginal-cost", "marginal-cost", "earliest-finish", "least-loaded", "round-robin") as fc.Arbitrary<PolicyProfile["placement"]>,
        fc.constantFrom("posted", "bid") as fc.Arbitrary<"posted" | "bid">,
        fc.constantFrom(1e5, 1e10),
        fc.integer({ min: 1, max: 1000 }),
        // A small limit on machines inspected per task cuts the search short.
        fc.constantFrom(1, 3, 7, 4096),
        (ms, t, benefit, placement, pricing, linkBytesPerSecond, seed, maxCandidatesPerTask) => {
          const settings = { pricing, linkBytesPerSecond, maxCandidatesPerTask };
          const policy = createPolicy("miserly", { placement });
          const j = jobOf(t, benefit, seed);
          const want = straightforward(marketOf(ms, settings), j, 1, chooserFor(placement, createRng(seed)), policy.profile);
          const got = policy.admit(marketOf(ms, settings), j, 1, createRng(seed));
          outcomes.add(`${got.outcome}:${got.reasons[0]!.code}`);
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 1500 },
    );
    // The runs reach the common ways a decision goes (always-admit, rare here, is checked below).
    for (const o of ["admitted:profitable", "delayed:unprofitable", "delayed:no-feasible-machine", "rejected:unprofitable"]) expect(outcomes).toContain(o);
  }, 120_000);

  it("decides small jobs on many machines that look alike exactly as the straightforward search", () => {
    // Alike machines tie on their bounds, so each task's walk meets all of them: the run's search
    // goes further several times, past machines switched off (their bound is not finite), the
    // candidate limit, and for tasks that differ in bytes, machines that depart.
    const alike = (n: number, off: number, busyEvery: number, dedicated = 0) => {
      const s = market(Array.from({ length: n }, (_, i) => (i < n - dedicated
        ? opp(`m${i}`, { slots: 2, memoryPerSlotMb: 4096, pricePerSecond: 0.0001, owner: `o${i % 7}`, available: i >= off })
        : { id: `m${i}`, kind: "dedicated" as const, slots: 2, speed: 1, memoryPerSlotMb: 4096, bandwidthBytesPerSecond: 1e7, contractPrice: 1, departureAt: 1.6 })), {});
      for (let i = 0; i < n; i += busyEvery) {
        s.assignTask({ id: `bg${i}`, jobId: "bg", work: 5, memoryMb: 1, bytes: 0 }, `m${i}`, 0);
        s.taskStarted(`bg${i}`, 0);
      }
      return s;
    };
    const cases: [number, number, number, number, number, number, number, BenefitCurve][] = [
      // machines, switched off, busy every, dedicated (departing soon), tasks, memory per task, bytes step
      [300, 0, 3, 0, 20, 1, 0, { kind: "constant", value: 100 }],
      [300, 0, 2, 0, 2, 0, 0, { kind: "constant", value: 100 }],
      [200, 190, 4, 0, 25, 1, 0, { kind: "constant", value: 100 }],
      [200, 0, 1, 0, 30, 9000, 0, { kind: "constant", value: 100 }],
      [150, 0, 5, 0, 20, 1, 0, { kind: "linear-decay", value: 100, start: 0.5, end: 20, floor: 0 }],
      // Tasks that differ in bytes (their finish differs): with and without machines that depart.
      [300, 0, 3, 0, 20, 1, 1e6, { kind: "constant", value: 100 }],
      [150, 0, 5, 0, 20, 1, 1e6, { kind: "linear-decay", value: 100, start: 0.5, end: 20, floor: 0 }],
      [200, 0, 3, 200, 20, 1, 1e6, { kind: "constant", value: 100 }],
      [200, 0, 3, 20, 20, 1, 1e6, { kind: "constant", value: 100 }],
    ];
    for (const [n, off, busyEvery, dedicated, count, memoryMb, bytesStep, benefit] of cases) {
      for (const maxCandidatesPerTask of [4096, 40]) {
        const j = jobOf({ count, work: 0.5, memoryMb, bytes: 100, bytesStep, mixed: false, replicas: 1 }, benefit, n + count);
        const policy = createPolicy("miserly");
        const state = alike(n, off, busyEvery, dedicated);
        state.updateSettings({ maxCandidatesPerTask });
        const want = straightforward(state, j, 1, chooserFor("marginal-cost", createRng(1)), policy.profile);
        const again = alike(n, off, busyEvery, dedicated);
        again.updateSettings({ maxCandidatesPerTask });
        expect(policy.admit(again, j, 1, createRng(1))).toEqual(want);
      }
    }
  });

  it("decides a 10,000-task job exactly as the straightforward search: admitted, delayed, always admitted", () => {
    const ms: MachineSpec[] = Array.from({ length: 5 }, (_, i) => ({ speed: 1 + i * 0.2, slots: 4, memoryPerSlotMb: 512, pricePerSecond: 0.0001 * (i + 1), load: i * 10 }));
    const cases: [number, BenefitCurve, number, string][] = [
      [0, { kind: "constant", value: 20 }, 1e10, "admitted:profitable"],
      [64, { kind: "constant", value: 20 }, 1e10, "delayed:no-feasible-machine"],
      // The link cannot carry 10 MB within its bounds: only a benefit above any cost admits it.
      [0, { kind: "constant", value: 1e12 }, 1e4, "admitted:always-admit"],
    ];
    for (const [memoryMb, benefit, linkBytesPerSecond, outcome] of cases) {
      const j = jobOf({ count: 10_000, work: 0.01, memoryMb, bytes: 1024, mixed: false, replicas: 1 }, benefit, 3);
      const policy = createPolicy("miserly");
      const want = straightforward(marketOf(ms, { linkBytesPerSecond }), j, 1, chooserFor("marginal-cost", createRng(1)), policy.profile);
      const got = policy.admit(marketOf(ms, { linkBytesPerSecond }), j, 1, createRng(1));
      expect(`${got.outcome}:${got.reasons[0]!.code}`).toBe(outcome);
      expect(got).toEqual(want);
    }
  });

  it("asks a big job again with its tasks as they are now, not as they were sorted last time", () => {
    const ms: MachineSpec[] = Array.from({ length: 3 }, (_, i) => ({ speed: 1 + i, slots: 2, memoryPerSlotMb: 512, pricePerSecond: 0.001, load: 0 }));
    const policy = createPolicy("miserly");
    const first = jobOf({ count: 2000, work: 1, memoryMb: 0, bytes: 0, mixed: false, replicas: 1 }, { kind: "constant", value: 1e4 }, 5);
    // The same job id, its tasks now of two sizes and listed backwards, then with other ids.
    const resized = { ...first, tasks: first.tasks.map((t, i) => ({ ...t, work: i % 3 === 0 ? 2 : 1 })).reverse() };
    const renamed = { ...first, tasks: first.tasks.map((t, i) => ({ ...t, id: `x${(i * 7919) % 2000}` })) };
    // The same tasks shuffled (the order is reused through each id's place), and with one id twice.
    const shuffled = { ...first, tasks: first.tasks.map((t, i) => first.tasks[(i * 7919) % 2000]!) };
    const twice = { ...first, tasks: first.tasks.map((t, i) => (i === 1 ? { ...t, id: first.tasks[0]!.id } : t)) };
    const shuffledResized = { ...shuffled, tasks: shuffled.tasks.map((t, i) => (i === 5 ? { ...t, work: 3 } : t)) };
    for (const j of [first, resized, first, renamed, first, shuffled, shuffled, shuffledResized, first, twice, shuffled]) {
      const want = straightforward(marketOf(ms, {}), j, 1, chooserFor("marginal-cost", createRng(1)), policy.profile);
      expect(policy.admit(marketOf(ms, {}), j, 1, createRng(1))).toEqual(want);
    }
  });
});
