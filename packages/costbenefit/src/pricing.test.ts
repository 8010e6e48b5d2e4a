import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { benefitAt, type BenefitCurve } from "./benefit.ts";
import { createRng } from "./rng.ts";
import { createPolicy } from "./policies/policy.ts";
import { job, market, opp } from "./test-fixtures.ts";
import type { Decision } from "./decision.ts";

const miserly = createPolicy("miserly");
const rng = createRng(1);

/** A market of a few machines, some already holding work, and the job's tasks. */
const arbMarket = fc.record({
  machines: fc.array(
    fc.record({ speed: fc.double({ min: 0.1, max: 3, noNaN: true }), slots: fc.integer({ min: 1, max: 2 }), pricePerSecond: fc.double({ min: 0, max: 2, noNaN: true }), backlog: fc.double({ min: 0, max: 100, noNaN: true }) }),
    { minLength: 2, maxLength: 6 },
  ),
  horizonSeconds: fc.double({ min: 20, max: 300, noNaN: true }),
  priceConstant: fc.double({ min: 0.01, max: 5, noNaN: true }),
  tasks: fc.array(fc.double({ min: 1, max: 40, noNaN: true }), { minLength: 1, maxLength: 3 }),
});

const arbCurve: fc.Arbitrary<BenefitCurve> = fc.oneof(
  fc.record({ kind: fc.constant("constant" as const), value: fc.double({ min: 0, max: 300, noNaN: true }) }),
  fc.record({ kind: fc.constant("deadline" as const), value: fc.double({ min: 0, max: 300, noNaN: true }), deadline: fc.double({ min: 1, max: 300, noNaN: true }), penalty: fc.double({ min: -40, max: 0, noNaN: true }) }),
  fc
    .record({ value: fc.double({ min: 0, max: 300, noNaN: true }), start: fc.double({ min: 0, max: 30, noNaN: true }), length: fc.double({ min: 1, max: 200, noNaN: true }), floor: fc.double({ min: -40, max: 0, noNaN: true }) })
    .map(({ value, start, length, floor }) => ({ kind: "linear-decay" as const, value, start, end: start + length, floor })),
);

/** The misreports of the issue: scaled down or up, deadline moved, or any other shape. */
function misreports(truth: BenefitCurve): fc.Arbitrary<BenefitCurve> {
  const scaled = fc.double({ min: 0.05, max: 4, noNaN: true }).map((k) => scale(truth, k));
  const moved = fc.double({ min: 0.1, max: 3, noNaN: true }).map((k) => stretch(truth, k));
  // Shape changed: the same top value with a deadline or a decay of the consumer's choosing, or any curve.
  const top = benefitAt(truth, 0);
  const deadline = fc.double({ min: 0.5, max: 300, noNaN: true }).map((d): BenefitCurve => ({ kind: "deadline", value: top, deadline: d }));
  const decay = fc.tuple(fc.double({ min: 0, max: 200, noNaN: true }), fc.double({ min: 1, max: 300, noNaN: true })).map(([start, length]): BenefitCurve => ({ kind: "linear-decay", value: top, start, end: start + length, floor: 0 }));
  return fc.oneof(scaled, moved, deadline, decay, arbCurve);
}

function scale(c: BenefitCurve, k: number): BenefitCurve {
  switch (c.kind) {
    case "constant": return { ...c, value: c.value * k };
    case "deadline": return { ...c, value: c.value * k, penalty: (c.penalty ?? 0) * k };
    case "linear-decay": return { ...c, value: c.value * k, floor: c.floor * k };
    case "piecewise": return { ...c, points: c.points.map((p) => ({ ...p, value: p.value * k })) };
  }
}

function stretch(c: BenefitCurve, k: number): BenefitCurve {
  switch (c.kind) {
    case "constant": return c;
    case "deadline": return { ...c, deadline: c.deadline * k };
    case "linear-decay": return { ...c, start: c.start * k, end: c.end * k };
    case "piecewise": return { ...c, points: c.points.map((p) => ({ ...p, t: p.t * k })) };
  }
}

type Scenario = typeof arbMarket extends fc.Arbitrary<infer T> ? T : never;

function decide(sc: Scenario, pricing: "posted" | "bid", curve: BenefitCurve): Decision {
  const s = market(
    sc.machines.map((m, i) => opp(`m${i}`, { speed: m.speed, slots: m.slots, pricePerSecond: m.pricePerSecond })),
    { pricing, horizonSeconds: sc.horizonSeconds, priceConstant: sc.priceConstant },
  );
  sc.machines.forEach((m, i) => {
    if (m.backlog > 0) s.assignTask({ id: `load-${i}`, jobId: "load", work: m.backlog, memoryMb: 0, bytes: 0 }, `m${i}`, 0);
  });
  return miserly.admit(s, job("j", curve, sc.tasks.map((work) => ({ work }))), 0, rng);
}

/** The consumer's true gain: true b at the planned completion minus the price; 0 if not admitted. */
function gain(truth: BenefitCurve, d: Decision): number {
  return d.outcome === "admitted" ? benefitAt(truth, d.completionAt) - d.price : 0;
}

const alwaysAdmitted = (d: Decision) => d.outcome === "admitted" && d.reasons.some((r) => r.code === "always-admit");

/** A misreport that pays: more true gain than the truth, outside the always-admit rule. */
function profitableMisreport(pricing: "posted" | "bid") {
  return fc.property(arbMarket, arbCurve.chain((truth) => fc.tuple(fc.constant(truth), misreports(truth))), (sc, [truth, lie]) => {
    const honest = gain(truth, decide(sc, pricing, truth));
    const d = decide(sc, pricing, lie);
    // Exception (README "Pricing rules"): overstating past the highest possible cost buys the
    // always-admit rule's plan, which is outside the menu the truth is offered.
    if (alwaysAdmitted(d)) return true;
    return gain(truth, d) <= honest + 1e-9 * (1 + Math.abs(honest));
  });
}

describe("posted prices are truthful", () => {
  it("no misreport of the benefit curve gives the consumer more true gain than the truth (property)", () => {
    fc.assert(profitableMisreport("posted"), { numRuns: 500, seed: 11 });
  });

  it("under pay-as-bid a misreport pays: the same search finds one", () => {
    const r = fc.check(profitableMisreport("bid"), { numRuns: 500, seed: 11 });
    expect(r.failed).toBe(true);
  });

  it("a consumer who invents a deadline gets no plan the truth was not offered", () => {
    // Two machines: a slow free one and a fast dear one. The true curve decays slowly; inventing
    // a deadline between the two finishes used to add a candidate time; the menu now has both.
    const sc: Scenario = { machines: [{ speed: 0.25, slots: 1, pricePerSecond: 0, backlog: 0 }, { speed: 1, slots: 1, pricePerSecond: 0.5, backlog: 0 }], horizonSeconds: 100, priceConstant: 1, tasks: [10] };
    const truth: BenefitCurve = { kind: "linear-decay", value: 30, start: 0, end: 100, floor: 0 };
    const honest = decide(sc, "posted", truth);
    const lie = decide(sc, "posted", { kind: "deadline", value: 30, deadline: 15 });
    expect(honest.outcome).toBe("admitted");
    expect(gain(truth, lie)).toBeLessThanOrEqual(gain(truth, honest) + 1e-9);
    // The truth is served by the fast machine: 27 credits at 10 s for a price of about 5.6, against 18 at 40 s on the slow one.
    expect(honest.outcome === "admitted" && honest.completionAt).toBeCloseTo(10);
  });
});
