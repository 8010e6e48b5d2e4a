import { describe, expect, it } from "vitest";
import { benefitAt, type BenefitCurve } from "./benefit.ts";
import { commitDecision } from "./commit.ts";
import { createPolicy } from "./policies/policy.ts";
import { createRng } from "./rng.ts";
import { DEFAULT_TERMS } from "./settlement.ts";
import { job, market, opp } from "./test-fixtures.ts";
import { PILOT_TASKS, decidePilots, decideRemainder, loweredBenefit, pilotCount, pilotWork, provisionalWork } from "./pilots.ts";

const miserly = createPolicy("miserly");
const rng = createRng(1);
const tasks = (n: number) => Array.from({ length: n }, () => ({}));

describe("a job without a work estimate", () => {
  it("runs its first tasks as pilots, priced at the most a pilot is paid for", () => {
    const s = market([opp("a", { pricePerSecond: 0.01 }), opp("b", { pricePerSecond: 0.01 })], { horizonSeconds: 1000 });
    const j = job("j", { kind: "constant", value: 100 }, tasks(10));
    const d = decidePilots((x) => miserly.admit(s, x, 0, rng), DEFAULT_TERMS, j, 30);
    expect(pilotCount(10)).toBe(PILOT_TASKS);
    expect(d.outcome).toBe("admitted");
    if (d.outcome !== "admitted") return;
    expect(d.placements).toHaveLength(PILOT_TASKS);
    expect(d.placements.map((p) => p.taskId)).toEqual(expect.arrayContaining(["j.t0", "j.t1", "j.t2"]));
    // Each pilot is planned at the pilot cap (10 s of reference work), not its 30 s wall-time limit.
    expect(provisionalWork(DEFAULT_TERMS, 30)).toBe(DEFAULT_TERMS.pilotWorkCapSeconds);
    expect(d.priceParts!.producerPayments).toBeCloseTo(3 * DEFAULT_TERMS.pilotWorkCapSeconds * 0.01);
    expect(d.reasons.at(-1)).toEqual({ code: "pilot-tasks", pilots: 3, tasks: 10, provisionalWorkPerTask: 10, wallSeconds: 30, atMost: d.price });
  });

  it("is all pilots when it has no more tasks than the pilots", () => {
    expect(pilotCount(2)).toBe(2);
    const s = market([opp("a")]);
    const d = decidePilots((x) => miserly.quote(s, x, 0, rng), DEFAULT_TERMS, job("j", { kind: "constant", value: 100 }, tasks(2)), 10);
    expect(d.outcome === "admitted" && d.placements).toHaveLength(2);
  });

  it("plans the rest from the pilots' measured work against the benefit the pilots' price leaves", () => {
    const s = market([opp("a", { pricePerSecond: 0.01 }), opp("b", { pricePerSecond: 0.01, speed: 2 })], { horizonSeconds: 1000 });
    const full = job("j", { kind: "constant", value: 100 }, tasks(10));
    const pilots = decidePilots((x) => miserly.admit(s, x, 0, rng), DEFAULT_TERMS, full, 60);
    if (pilots.outcome !== "admitted") throw new Error("pilots not admitted");
    commitDecision(s, { ...full, tasks: full.tasks.slice(0, 3) }, pilots, 0);
    // 2 s on the speed-1 machine and 1 s on the speed-2 one: 2 s of reference work each.
    const runs = [{ owner: "a", work: 2 }, { owner: "b", work: 2 }, { owner: "a", work: 2 }];
    const rest = { ...full, tasks: full.tasks.slice(3) };
    const { decision, workPerTask } = decideRemainder((x) => miserly.admit(s, x, 5, rng), DEFAULT_TERMS, { job: rest, pilots: 3, runs, wallSeconds: 60, pilotPrice: pilots.price });
    expect(workPerTask).toBeCloseTo(2);
    expect(decision.outcome).toBe("admitted");
    if (decision.outcome !== "admitted") return;
    expect(decision.placements).toHaveLength(7);
    // Planned at 2 s of work each, not the 10 s the pilots were priced at.
    expect(decision.priceParts!.producerPayments).toBeLessThan(7 * 2 * 0.01 + 1e-9);
    expect(decision.price + pilots.price).toBeLessThanOrEqual(100);
    expect(decision.reasons.at(-1)).toEqual({ code: "planned-from-pilots", pilots: 3, runs: 3, measuredWorkPerTask: workPerTask, provisionalWorkPerTask: 10 });
  });

  it("takes the median over the pilots' owners, so one pilot's owner cannot move the measured work alone", () => {
    expect(pilotWork([{ owner: "a", work: 1 }, { owner: "b", work: 1e9 }, { owner: "c", work: 1.2 }])).toBe(1.2);
    expect(pilotWork([])).toBeUndefined();
  });

  it("rejects the rest when what the pilots measured leaves it unprofitable", () => {
    const s = market([opp("a", { pricePerSecond: 1 })], { horizonSeconds: 1000 });
    const full = job("j", { kind: "constant", value: 5 }, tasks(6));
    const runs = ["a", "b", "c"].map((owner) => ({ owner, work: 10 }));
    const { decision } = decideRemainder((x) => miserly.admit(s, x, 0, rng), DEFAULT_TERMS, { job: { ...full, tasks: full.tasks.slice(3) }, pilots: 3, runs, wallSeconds: 60, pilotPrice: 1 });
    // 3 tasks x 10 s x 1 credit/s = 30 credits against the 4 the pilots left.
    expect(decision.outcome).not.toBe("admitted");
    expect(decision.reasons.map((r) => r.code)).toContain("planned-from-pilots");
  });

  it("lowers every kind of curve by the same amount", () => {
    const curves: BenefitCurve[] = [
      { kind: "constant", value: 10 },
      { kind: "deadline", value: 10, deadline: 5, penalty: 2 },
      { kind: "linear-decay", value: 10, start: 1, end: 9, floor: 1 },
      { kind: "piecewise", points: [{ t: 0, value: 10 }, { t: 4, value: 6 }] },
    ];
    for (const c of curves) for (const t of [0, 3, 7, 20]) expect(benefitAt(loweredBenefit(c, 3), t)).toBeCloseTo(benefitAt(c, t) - 3);
  });
});
