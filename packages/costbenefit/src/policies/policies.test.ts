import { describe, expect, it } from "vitest";
import { commitDecision } from "../commit.ts";
import { createRng } from "../rng.ts";
import { job, market, opp } from "../test-fixtures.ts";
import { createPolicy } from "./policy.ts";
import { POLICY_NAMES } from "./registry.ts";

const rng = createRng(3);

describe("policy registry", () => {
  it("builds every named policy, and refuses unknown names and bad profiles", () => {
    for (const name of ["miserly", "e-pvm", "e-mosix", "pvm", "mosix", "random", "fcfs"]) expect(POLICY_NAMES).toContain(name);
    for (const name of POLICY_NAMES) expect(createPolicy(name).name).toBe(name);
    expect(() => createPolicy("nope")).toThrow(/unknown policy/);
    expect(() => createPolicy("miserly", { placement: "psychic" as never })).toThrow();
  });

  it("refuses, when built, a profile no code would honour, and says why", () => {
    expect(() => createPolicy("miserly", { placement: "best-fit" })).toThrow(/belongs to a share policy/);
    expect(() => createPolicy("tickets", { placement: "marginal-cost" })).toThrow(/places tasks by its own rule "free-slot"/);
    expect(() => createPolicy("opportunity-cost", { migration: { rule: "rebalance" } })).toThrow(/never moves tasks/);
    expect(() => createPolicy("e-pvm", { migration: { rule: "best-response" } })).toThrow(/belongs to a share policy/);
    expect(() => createPolicy("miserly", { holdBeyondBounds: true })).toThrow(/admit-all with marginal-cost/);
    expect(() => createPolicy("pvm", { migration: { rule: "none", moveRunning: true } })).toThrow(/cannot move/);
  });

  it("lets a profile override change behaviour: miserly without rebalancing moves nothing", () => {
    expect(createPolicy("miserly", { migration: { rule: "none" } }).profile.migration.rule).toBe("none");
  });

  it("admits everything without admission control, even a job that loses money", () => {
    const s = market([opp("a"), opp("b")], { priceConstant: 100 });
    const d = createPolicy("e-pvm").admit(s, job("j", { kind: "constant", value: 0 }), 0, rng);
    expect(d.outcome).toBe("admitted");
    expect(d.reasons[0]).toMatchObject({ code: "no-admission-control", policy: "e-pvm" });
  });

  it("round-robin walks the machines in turn", () => {
    const s = market([opp("a"), opp("b"), opp("c")]);
    const pvm = createPolicy("pvm");
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const j = job(`j${i}`, { kind: "constant", value: 1 });
      const d = pvm.admit(s, j, 0, rng);
      if (d.outcome !== "admitted") throw new Error("not admitted");
      seen.push(d.placements[0]!.machineId);
      commitDecision(s, j, d, 0);
    }
    expect(seen).toEqual(["a", "b", "c", "a"]);
  });

  it("re-places the tasks of a departed machine on the remaining ones", () => {
    const s = market([opp("a"), opp("b"), opp("c")]);
    const miserly = createPolicy("miserly");
    const j = job("j", { kind: "constant", value: 100 }, [{ work: 5 }, { work: 5 }, { work: 5 }]);
    commitDecision(s, j, miserly.admit(s, j, 0, rng), 0);
    const back = s.removeMachine("a", 1);
    expect(back).toHaveLength(1);
    const r = miserly.place(s, back, 1, rng);
    expect(r.unplaced).toEqual([]);
    expect(["b", "c"]).toContain(r.placements[0]!.machineId);
  });

  it("rebalances a queued task onto a machine that fell idle, finishing no later", () => {
    const s = market([opp("a"), opp("b")]);
    s.assignTask({ id: "run", jobId: "j", work: 50, memoryMb: 0, bytes: 0 }, "a", 0);
    s.taskStarted("run", 0);
    s.assignTask({ id: "wait", jobId: "j", work: 20, memoryMb: 0, bytes: 0 }, "a", 0);
    s.assignTask({ id: "b1", jobId: "k", work: 5, memoryMb: 0, bytes: 0 }, "b", 0);
    s.taskStarted("b1", 0);
    s.taskFinished("b1", 5, 5);
    const t = createPolicy("miserly").tick(s, 5, rng);
    expect(t.moves).toHaveLength(1);
    expect(t.moves[0]).toMatchObject({ taskId: "wait", fromMachineId: "a", toMachineId: "b", reasons: [{ code: "rebalance" }] });
    const r = t.moves[0]!.reasons[0]!;
    if (r.code === "rebalance") {
      expect(r.costAfter).toBeLessThan(r.costBefore);
      expect(r.finishAfter).toBeLessThanOrEqual(r.finishBefore);
    }
  });

  it("mosix ushers memory off a machine that is over its memory", () => {
    const s = market([opp("a", { memoryPerSlotMb: 100 }), opp("b", { memoryPerSlotMb: 100 })]);
    for (const [id, mem] of [["x", 60], ["y", 60]] as const) {
      s.assignTask({ id, jobId: "j", work: 50, memoryMb: mem, bytes: 0 }, "a", 0);
      s.taskStarted(id, 0);
    }
    const t = createPolicy("mosix").tick(s, 1, rng);
    expect(t.moves[0]).toMatchObject({ fromMachineId: "a", toMachineId: "b", reasons: [{ code: "memory-ushering" }] });
  });
});

describe("dedicated purchase rule", () => {
  const offer = (contractPrice: number) => ({ id: "d", kind: "dedicated" as const, slots: 4, speed: 1, memoryPerSlotMb: 1024, bandwidthBytesPerSecond: 1e7, reputation: 1, contractPrice, departureAt: 1000 });

  it("buys capacity that is cheaper than what the market charges for it, and explains the numbers", () => {
    const s = market([opp("a", { pricePerSecond: 0.1 }), opp("b", { pricePerSecond: 0.1 })]);
    const yes = createPolicy("miserly").considerDedicatedOffer(s, offer(100), 0);
    expect(yes.accept).toBe(true);
    expect(yes.reasons[0]).toMatchObject({ code: "offer-accepted", contractPrice: 100, capacityWork: 4000 });
    const no = createPolicy("miserly").considerDedicatedOffer(s, offer(1e6), 0);
    expect(no).toMatchObject({ accept: false, reasons: [{ code: "offer-too-expensive" }] });
  });

  it("refuses an offer past the account's contract ceiling, naming the ceiling and what its contracts already hold", () => {
    const s = market([opp("a", { pricePerSecond: 0.1 }), opp("b", { pricePerSecond: 0.1 })]);
    const policy = createPolicy("miserly");
    expect(policy.considerDedicatedOffer(s, offer(100), 0, Infinity, { ceiling: 110, promised: 10 }).accept).toBe(true);
    expect(policy.considerDedicatedOffer(s, offer(100), 0, Infinity, { ceiling: 110, promised: 10.5 })).toEqual({
      accept: false,
      reasons: [{ code: "offer-over-ceiling", contractPrice: 100, ceiling: 110, promised: 10.5 }],
    });
  });

  it("pays more for capacity when the market is busy", () => {
    const idle = market([opp("a"), opp("b")]);
    const busy = market([opp("a"), opp("b")]);
    busy.assignTask({ id: "t1", jobId: "j", work: 90, memoryMb: 0, bytes: 0 }, "a", 0);
    busy.assignTask({ id: "t2", jobId: "j", work: 90, memoryMb: 0, bytes: 0 }, "b", 0);
    const v = (s: typeof idle) => {
      const r = createPolicy("miserly").considerDedicatedOffer(s, offer(0), 0).reasons[0]!;
      return r.code === "offer-accepted" ? r.value : NaN;
    };
    expect(v(busy)).toBeGreaterThan(v(idle));
  });
});
