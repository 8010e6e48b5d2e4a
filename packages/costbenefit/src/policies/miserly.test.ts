import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { benefitAt } from "../benefit.ts";
import { commitDecision } from "../commit.ts";
import { createRng } from "../rng.ts";
import { market, job, opp } from "../test-fixtures.ts";
import { highestPossibleCost } from "./bounds.ts";
import { createPolicy } from "./policy.ts";
import { askedAgainDue, askedNow } from "./outcomes.ts";
import type { MarketState } from "../state/market-state.ts";
import type { MachineProfileInput } from "../machine.ts";

const miserly = createPolicy("miserly");
const rng = createRng(1);

function loaded(s: MarketState, machineId: string, work: number): void {
  s.assignTask({ id: `load-${machineId}-${work}`, jobId: "load", work, memoryMb: 0, bytes: 0 }, machineId, 0);
}

describe("miserly admission", () => {
  it("admits a profitable job with its price, completion time and placement on the cheapest machine", () => {
    const s = market([opp("busy"), opp("idle")]);
    loaded(s, "busy", 60);
    const d = miserly.admit(s, job("j", { kind: "constant", value: 50 }), 0, rng);
    expect(d.outcome).toBe("admitted");
    if (d.outcome !== "admitted") return;
    expect(d.placements).toHaveLength(1);
    expect(d.placements[0]!.machineId).toBe("idle");
    expect(d.placements[0]!.expectedFinishAt).toBeCloseTo(10);
    // Posted pricing (the default): the plan's marginal cost plus the 10% fee, not the bid.
    expect(d.marginalCost).toBeCloseTo(Math.pow(2, 0.1) - 1);
    expect(d.price).toBeCloseTo(d.marginalCost * 1.1);
    expect(d.priceParts).toMatchObject({ producerPayments: 0 });
    expect(d.priceParts!.congestion + d.priceParts!.fee).toBeCloseTo(d.price);
    expect(d.reasons[0]).toMatchObject({ code: "profitable", benefit: 50 });
  });

  it("charges the bid itself under the paper's pay-as-bid rule, and under posted prices admits only a benefit above the price", () => {
    const bid = market([opp("a")], { pricing: "bid" });
    const d = miserly.admit(bid, job("j", { kind: "constant", value: 50 }), 0, rng);
    expect(d.outcome === "admitted" && d.price).toBe(50);
    // 40 credits to the producer plus congestion, plus the fee: about 44. A benefit of 41 is above
    // the highest possible cost, but the always-admit plan is priced at least at that cost plus
    // the fee too, so it no longer buys the plan for the benefit itself.
    const posted = market([opp("a", { pricePerSecond: 4 })]);
    const tight = miserly.admit(posted, job("k", { kind: "constant", value: 41 }, [{ work: 10 }]), 0, rng);
    expect(tight.outcome).toBe("delayed");
    expect(tight.reasons[0]).toMatchObject({ code: "unprofitable", benefit: 41 });
    const enough = miserly.admit(posted, job("k", { kind: "constant", value: 45 }, [{ work: 10 }]), 0, rng);
    expect(enough.outcome).toBe("admitted");
    if (enough.outcome !== "admitted") return;
    expect(enough.priceParts!.producerPayments).toBeCloseTo(40);
    expect(enough.price).toBeCloseTo(enough.marginalCost * 1.1);
    expect(enough.price).toBeLessThan(45);
  });

  it("does not change the market when it only quotes or decides", () => {
    const s = market([opp("a"), opp("b")]);
    const before = JSON.stringify(s.machine("a", 0)) + JSON.stringify(s.machine("b", 0));
    miserly.quote(s, job("j", { kind: "constant", value: 50 }), 0, rng);
    miserly.admit(s, job("j", { kind: "constant", value: 50 }), 0, rng);
    expect(JSON.stringify(s.machine("a", 0)) + JSON.stringify(s.machine("b", 0))).toBe(before);
    expect(s.tasks.size).toBe(0);
  });

  it("finishes a deadline job by its deadline even when a cheaper machine would be too late", () => {
    // The slow machine is free but too slow; the fast one is dear (opportunistic price).
    const s = market([opp("slow", { speed: 0.1 }), opp("fast", { speed: 1, pricePerSecond: 0.5 })]);
    const d = miserly.admit(s, job("j", { kind: "deadline", value: 100, deadline: 20 }, [{ work: 10 }]), 0, rng);
    expect(d.outcome).toBe("admitted");
    if (d.outcome !== "admitted") return;
    expect(d.placements[0]!.machineId).toBe("fast");
    expect(d.completionAt).toBeLessThanOrEqual(20);
  });

  it("delays a job that does not pay for a busy market, and rejects it once its deadline cannot be met", () => {
    const s = market([opp("a"), opp("b")], { priceConstant: 10 });
    loaded(s, "a", 90);
    loaded(s, "b", 90);
    const j = job("j", { kind: "deadline", value: 0.5, deadline: 500 }, [{ work: 5 }]);
    const d = miserly.admit(s, j, 0, rng);
    expect(d.outcome).toBe("delayed");
    expect(d.reasons[0]).toMatchObject({ code: "unprofitable" });
    const late = miserly.admit(s, j, 499, rng);
    expect(late.outcome).toBe("rejected");
    expect(late.reasons.map((r) => r.code)).toContain("cannot-become-profitable");
  });

  it("rejects a delayed job after the maximum wait", () => {
    const s = market([opp("a"), opp("b")], { maxDelaySeconds: 60, priceConstant: 10 });
    loaded(s, "a", 99);
    loaded(s, "b", 99);
    const j = job("j", { kind: "constant", value: 0.5 }, [{ work: 5 }]);
    const d = miserly.admit(s, j, 0, rng);
    expect(d.outcome).toBe("delayed");
    commitDecision(s, j, d, 0);
    expect(miserly.tick(s, 30, rng).reject).toEqual([]);
    const t = miserly.tick(s, 61, rng);
    expect(t.reject[0]).toMatchObject({ jobId: "j", reasons: [{ code: "max-wait-exceeded", maxDelaySeconds: 60 }] });
  });

  it("re-evaluates a delayed job once capacity has changed", () => {
    const s = market([opp("a"), opp("b")], { priceConstant: 10 });
    loaded(s, "a", 99);
    loaded(s, "b", 99);
    const j = job("j", { kind: "constant", value: 1.2 }, [{ work: 10 }]);
    const d = miserly.admit(s, j, 0, rng);
    expect(d.outcome).toBe("delayed");
    commitDecision(s, j, d, 0);
    expect(miserly.tick(s, 1, rng).reevaluate).toEqual([]);
    s.upsertMachine(opp("c", { speed: 10 }), 2);
    expect(miserly.tick(s, 3, rng).reevaluate).toEqual(["j"]);
  });

  it("asks a delayed job again when a machine joined between its decision and its commit", () => {
    // The live service writes a decision down before committing it; a machine may join meanwhile.
    const s = market([opp("a"), opp("b")], { priceConstant: 10 });
    loaded(s, "a", 99);
    loaded(s, "b", 99);
    const j = job("j", { kind: "constant", value: 1.2 }, [{ work: 10 }]);
    const seen = s.seen();
    const d = miserly.admit(s, j, 0, rng);
    expect(d.outcome).toBe("delayed");
    s.upsertMachine(opp("c", { speed: 10 }), 0.5);
    commitDecision(s, j, d, 1, seen);
    expect(miserly.tick(s, 1, rng).reevaluate).toEqual(["j"]);
  });

  it("asks a delayed job again less often while it stays delayed, and at once when a machine joins", () => {
    const s = market([opp("a"), opp("b")], { priceConstant: 10, maxRecheckSeconds: 4 });
    loaded(s, "a", 99);
    loaded(s, "b", 99);
    const j = job("j", { kind: "constant", value: 0.5 }, [{ work: 5 }]);
    let at = 0;
    const askedAt: number[] = [];
    const first = miserly.admit(s, j, at, rng);
    expect(first.outcome).toBe("delayed");
    commitDecision(s, j, first, at);
    // Tasks keep finishing (capacity changes every second) and the job never fits.
    for (let second = 1; second <= 20; second++) {
      s.assignTask({ id: `x${second}`, jobId: "other", work: 1, memoryMb: 0, bytes: 0 }, "a", second);
      s.taskFinished(`x${second}`, second);
      if (miserly.tick(s, second, rng).reevaluate.includes("j")) {
        askedAt.push(second);
        at = second;
        const d = miserly.admit(s, j, at, rng);
        expect(d.outcome).toBe("delayed");
        commitDecision(s, j, d, at);
      }
    }
    // Waits of 1, 2 and then at most 4 seconds (maxRecheckSeconds).
    expect(askedAt).toEqual([1, 3, 7, 11, 15, 19]);
    s.upsertMachine(opp("c"), 20);
    expect(miserly.tick(s, 20, rng).reevaluate).toEqual(["j"]);
  });

  it("asks a pilot job's delayed rest again by the same backoff as a delayed job", () => {
    const s = market([opp("a")], { maxRecheckSeconds: 4 });
    expect(askedAgainDue(s, undefined, 0)).toBe(true);
    let asked = askedNow(s, undefined, 0);
    const dueAt: number[] = [];
    for (let second = 1; second <= 12; second++) {
      if (askedAgainDue(s, asked, second)) {
        dueAt.push(second);
        asked = askedNow(s, asked, second);
      }
    }
    expect(dueAt).toEqual([1, 3, 7, 11]);
    s.upsertMachine(opp("b"), 12);
    expect(askedAgainDue(s, asked, 12)).toBe(true);
  });

  it("always admits a job whose benefit exceeds the highest possible cost, even past the horizon", () => {
    const s = market([opp("a"), opp("b")]);
    loaded(s, "a", 100);
    loaded(s, "b", 100);
    const j = job("j", { kind: "constant", value: 1e6 }, [{ work: 50 }]);
    const d = miserly.admit(s, j, 0, rng);
    expect(d.outcome).toBe("admitted");
    expect(d.reasons[0]).toMatchObject({ code: "always-admit" });
  });

  it("explains a task no machine can hold, with counts per check", () => {
    const s = market([opp("a", { memoryPerSlotMb: 100 }), opp("b", { memoryPerSlotMb: 100 })]);
    const d = miserly.admit(s, job("j", { kind: "constant", value: 1e6 }, [{ memoryMb: 500 }]), 0, rng);
    expect(d.outcome).not.toBe("admitted");
    expect(d.reasons[0]).toMatchObject({ code: "no-feasible-machine", exclusions: { memory: 2 } });
  });

  it("puts replicas of one task on different machines", () => {
    const s = market([opp("a"), opp("b"), opp("c")]);
    const d = miserly.admit(s, job("j", { kind: "constant", value: 100 }, [{ id: "t" }], { replicas: 3 }), 0, rng);
    expect(d.outcome).toBe("admitted");
    if (d.outcome !== "admitted") return;
    expect(new Set(d.placements.map((p) => p.machineId)).size).toBe(3);
    expect(d.placements.map((p) => p.taskId).sort()).toEqual(["t", "t~1", "t~2"]);
    commitDecision(s, job("j", { kind: "constant", value: 100 }, [{ id: "t" }], { replicas: 3 }), d, 0);
    expect(s.tasks.size).toBe(3);
  });

  it("puts replicas of one task on machines of different owners, and waits rather than let one owner verify itself", () => {
    const s = market([opp("a1", { owner: "alice" }), opp("a2", { owner: "alice" }), opp("a3", { owner: "alice" }), opp("b1", { owner: "bob" })]);
    const two = miserly.admit(s, job("j", { kind: "constant", value: 100 }, [{ id: "t" }], { replicas: 2 }), 0, rng);
    expect(two.outcome).toBe("admitted");
    if (two.outcome !== "admitted") return;
    expect(two.placements.map((p) => p.machineId)).toContain("b1");
    const three = miserly.admit(s, job("k", { kind: "constant", value: 100 }, [{ id: "t" }], { replicas: 3 }), 0, rng);
    expect(three.outcome).not.toBe("admitted");
    expect(three.reasons[0]).toMatchObject({ code: "no-feasible-machine" });
  });
});

// ---- properties (fast-check) ----

const machineArb = fc.record({
  speed: fc.double({ min: 0.1, max: 4, noNaN: true }),
  slots: fc.integer({ min: 1, max: 4 }),
  memoryPerSlotMb: fc.integer({ min: 64, max: 2048 }),
  price: fc.double({ min: 0, max: 0.2, noNaN: true }),
  backlog: fc.double({ min: 0, max: 1, noNaN: true }),
  runningMem: fc.double({ min: 0, max: 1, noNaN: true }),
});
const curveArb = fc.oneof(
  fc.record({ kind: fc.constant("constant" as const), value: fc.double({ min: -5, max: 200, noNaN: true }) }),
  fc.record({ kind: fc.constant("deadline" as const), value: fc.double({ min: 0, max: 200, noNaN: true }), deadline: fc.double({ min: 1, max: 400, noNaN: true }) }),
  fc
    .tuple(fc.double({ min: 0, max: 200, noNaN: true }), fc.double({ min: 0, max: 200, noNaN: true }), fc.double({ min: 1, max: 300, noNaN: true }))
    .map(([v, a, len]) => ({ kind: "linear-decay" as const, value: v, start: a, end: a + len, floor: -v / 4 })),
);
const tasksArb = fc.array(fc.record({ work: fc.double({ min: 0.5, max: 60, noNaN: true }), memoryMb: fc.integer({ min: 0, max: 1500 }), bytes: fc.integer({ min: 0, max: 1e6 }) }), { minLength: 1, maxLength: 6 });

type MachineSpec = { speed: number; slots: number; memoryPerSlotMb: number; price: number; backlog: number; runningMem: number };
function build(ms: MachineSpec[]): MarketState {
  const profiles: MachineProfileInput[] = ms.map((m, i) => opp(`m${i}`, { speed: m.speed, slots: m.slots, memoryPerSlotMb: m.memoryPerSlotMb, pricePerSecond: m.price }));
  const s = market(profiles, { horizonSeconds: 100, priceConstant: 2, linkBytesPerSecond: 1e6 });
  ms.forEach((m, i) => {
    // Pre-existing load within the usage bounds: backlog up to H, running memory up to the max.
    const cap = m.speed * m.slots;
    if (m.backlog > 0) s.assignTask({ id: `q${i}`, jobId: "bg", work: m.backlog * 100 * cap, memoryMb: 0, bytes: 0 }, `m${i}`, 0);
    const mem = Math.floor(m.runningMem * m.memoryPerSlotMb);
    s.assignTask({ id: `r${i}`, jobId: "bg", work: 1, memoryMb: mem, bytes: 0 }, `m${i}`, 0);
    s.taskStarted(`r${i}`, 0);
  });
  return s;
}

describe("miserly properties", () => {
  it("never admits a job whose benefit at the planned completion is below the planned marginal cost", () => {
    fc.assert(
      fc.property(fc.array(machineArb, { minLength: 2, maxLength: 8 }), curveArb, tasksArb, (ms, curve, tasks) => {
        const s = build(ms);
        const j = job("j", curve, tasks);
        const d = miserly.admit(s, j, 0, rng);
        if (d.outcome === "admitted") {
          expect(benefitAt(j.benefit, d.completionAt - j.arrivedAt)).toBeGreaterThanOrEqual(d.marginalCost);
          expect(d.marginalCost).toBeCloseTo(d.placements.reduce((a, p) => a + p.marginalCost, 0));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("always admits a job whose benefit exceeds the highest possible cost", () => {
    fc.assert(
      fc.property(fc.array(machineArb, { minLength: 2, maxLength: 8 }), tasksArb, (ms, tasks) => {
        const s = build(ms);
        // Every task fits some machine's slot memory, so the job can be placed somewhere.
        const fit = Math.min(...ms.map((m) => m.memoryPerSlotMb)) - 1;
        const j0 = job("j", { kind: "constant", value: 1 }, tasks.map((t) => ({ ...t, memoryMb: Math.min(t.memoryMb, fit) })));
        const highest = highestPossibleCost(s, j0);
        fc.pre(highest < 1e11);
        const value = highest * 1.01 + 1;
        const j = { ...j0, benefit: { kind: "constant" as const, value } };
        expect(miserly.admit(s, j, 0, rng).outcome).toBe("admitted");
      }),
      { numRuns: 200 },
    );
  });

  it("never places a task on a machine whose row memory is smaller than the task's", () => {
    fc.assert(
      fc.property(fc.array(machineArb, { minLength: 2, maxLength: 8 }), curveArb, tasksArb, (ms, curve, tasks) => {
        const s = build(ms);
        const j = job("j", curve, tasks);
        const d = miserly.admit(s, j, 0, rng);
        if (d.outcome !== "admitted") return;
        for (const p of d.placements) {
          const t = j.tasks.find((x) => x.id === p.taskId)!;
          expect(t.memoryMb).toBeLessThanOrEqual(s.machine(p.machineId, 0)!.profile.memoryPerSlotMb);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("makes the identical decision when replayed with the same inputs", () => {
    fc.assert(
      fc.property(fc.array(machineArb, { minLength: 2, maxLength: 8 }), curveArb, tasksArb, fc.integer(), (ms, curve, tasks, seed) => {
        const j = job("j", curve, tasks);
        const a = miserly.admit(build(ms), j, 3, createRng(seed));
        const b = miserly.admit(build(ms), j, 3, createRng(seed));
        expect(b).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });
});
