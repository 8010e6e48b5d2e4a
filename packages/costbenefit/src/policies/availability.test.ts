import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { market, job, opp } from "../test-fixtures.ts";
import { createPolicy } from "./policy.ts";
import { POLICY_NAMES } from "./registry.ts";

const rng = createRng(1);

// A producer who pauses a machine (or whose schedule or idle rule switches it off) keeps it in
// the market: the engine must plan nothing on it until its capacity is offered again.
describe("a machine whose capacity is switched off", () => {
  it("is offered no work by any policy, and gets work again once it is available", () => {
    for (const name of POLICY_NAMES) {
      const policy = createPolicy(name);
      const s = market([opp("paused", { available: false }), opp("other", { available: false })]);
      const d = policy.admit(s, job(`j-${name}`, { kind: "constant", value: 1_000 }), 0, rng);
      expect(d.outcome === "admitted" ? d.placements : [], name).toEqual([]);
      const r = policy.place(s, [{ id: `t-${name}`, jobId: "x", work: 1, memoryMb: 0, bytes: 0 }], 0, rng);
      expect(r.placements, name).toEqual([]);

      s.upsertMachine(opp("paused"), 1);
      const again = policy.place(s, [{ id: `u-${name}`, jobId: "x", work: 1, memoryMb: 0, bytes: 0 }], 1, rng);
      expect(again.placements.map((p) => p.machineId), name).toEqual(["paused"]);
    }
  });

  it("is passed over for a machine that is on, and counted as unavailable when nothing else fits", () => {
    const miserly = createPolicy("miserly");
    const s = market([opp("cheap-but-paused", { available: false, speed: 10 }), opp("on", { pricePerSecond: 1 })]);
    const d = miserly.admit(s, job("j", { kind: "constant", value: 1_000 }), 0, rng);
    expect(d.outcome).toBe("admitted");
    if (d.outcome === "admitted") expect(d.placements.map((p) => p.machineId)).toEqual(["on"]);

    s.upsertMachine(opp("on", { available: false, pricePerSecond: 1 }), 0);
    const later = miserly.admit(s, job("k", { kind: "deadline", value: 1_000, deadline: 50 }), 0, rng);
    expect(later.outcome).not.toBe("admitted");
    const why = later.reasons.find((r) => r.code === "no-feasible-machine");
    expect(why && why.code === "no-feasible-machine" && why.exclusions.unavailable).toBe(2);
  });

  it("keeps the tasks it already runs when it is switched off", () => {
    const s = market([opp("m")]);
    s.assignTask({ id: "t", jobId: "x", work: 5, memoryMb: 0, bytes: 0 }, "m", 0);
    s.taskStarted("t", 0);
    s.upsertMachine(opp("m", { available: false }), 1);
    expect(s.machine("m", 1)?.running).toBe(1);
  });
});
