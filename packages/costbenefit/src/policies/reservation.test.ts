import { describe, expect, it } from "vitest";
import { commitDecision } from "../commit.ts";
import { createRng } from "../rng.ts";
import { job, market, opp } from "../test-fixtures.ts";
import { createPolicy } from "./policy.ts";

const rng = createRng(7);
// 10 work units due in 20 s: 0.5 work units per second, a quarter of a 2-machine pool.
const quarter = (id: string) => job(id, { kind: "deadline", value: 10, deadline: 20 });

describe("reservation (the Sharc paper, Sharc)", () => {
  it("admits jobs while the sum of reservations fits the pool, and refuses the one that would exceed it", () => {
    const s = market([opp("a"), opp("b")]);
    const p = createPolicy("reservation");
    for (const id of ["r1", "r2", "r3", "r4"]) {
      const j = quarter(id);
      const d = p.admit(s, j, 0, rng);
      expect(d.outcome).toBe("admitted");
      commitDecision(s, j, d, 0);
    }
    const d = p.admit(s, quarter("r5"), 0, rng);
    expect(d).toMatchObject({ outcome: "delayed", reasons: [{ code: "reservations-full", fraction: 0.25, reservedFraction: 1, bookableFraction: 1 }] });
    // More than the whole pool can never fit.
    const huge = p.admit(s, job("huge", { kind: "deadline", value: 10, deadline: 1 }, [{ work: 1 }, { work: 1 }, { work: 1 }]), 0, rng);
    expect(huge).toMatchObject({ outcome: "rejected", reasons: [{ code: "reservations-full", fraction: 1.5 }] });
  });

  it("places a task where it fits most tightly (best fit)", () => {
    const s = market([opp("a", { slots: 2 }), opp("b", { slots: 2 })]);
    const p = createPolicy("reservation");
    const big = job("big", { kind: "deadline", value: 10, deadline: 20 }, [{ work: 12 }]); // 0.6 on one machine
    const d1 = p.admit(s, big, 0, rng);
    commitDecision(s, big, d1, 0);
    const where = d1.outcome === "admitted" ? d1.placements[0]!.machineId : "";
    const d2 = p.admit(s, job("small", { kind: "deadline", value: 10, deadline: 20 }, [{ work: 6 }]), 0, rng); // 0.3 fits beside it
    expect(d2).toMatchObject({ outcome: "admitted", placements: [{ machineId: where }] });
  });

  it("lends a finished task's reservation to the remaining tasks of its job, not to the pool", () => {
    const s = market([opp("a"), opp("b")]);
    const p = createPolicy("reservation");
    // 2 tasks of 10 due in 10 s: 2 work units per second, the whole pool, 1 per machine.
    const whole = job("whole", { kind: "deadline", value: 10, deadline: 10 }, [{ work: 10 }, { work: 10 }]);
    commitDecision(s, whole, p.admit(s, whole, 0, rng), 0);
    s.taskFinished("whole.t0", 5, 5);
    const d = p.admit(s, job("other", { kind: "deadline", value: 10, deadline: 100 }, [{ work: 10 }]), 5, rng);
    expect(d).toMatchObject({ outcome: "delayed", reasons: [{ code: "reservations-full", reservedFraction: 1 }] });
  });
});
