import { describe, expect, it } from "vitest";
import { commitDecision } from "../commit.ts";
import { createRng } from "../rng.ts";
import { job, market, opp } from "../test-fixtures.ts";
import { createPolicy } from "./policy.ts";

const rng = createRng(7);

describe("opportunity-cost (the Millennium paper, Millennium)", () => {
  it("charges a lone job nothing, and a contended one its rate per minute at its share", () => {
    const s = market([opp("a")]);
    const p = createPolicy("opportunity-cost");
    // 100 credits for 10 work units: 30 x 100 / 10 = 300 credits per minute.
    const alone = job("alone", { kind: "constant", value: 100 });
    const d1 = p.admit(s, alone, 0, rng);
    expect(d1).toMatchObject({ outcome: "admitted", reasons: [{ code: "opportunity-cost", ratePerMinute: 300, nodePricePerMinute: 0, share: 1, expectedCharge: 0 }] });
    commitDecision(s, alone, d1, 0);
    s.taskStarted("alone.t0", 0);
    // 600 per minute against 300 on the node: two thirds of it, 15 s of running, 150 credits.
    const second = job("second", { kind: "constant", value: 200 });
    const d2 = p.admit(s, second, 0, rng);
    expect(d2.outcome).toBe("admitted");
    const r = d2.reasons[0]!;
    if (r.code !== "opportunity-cost") throw new Error(r.code);
    expect(r.nodePricePerMinute).toBe(300);
    expect(r.share).toBeCloseTo(2 / 3);
    expect(r.expectedCharge).toBeCloseTo(150);
  });

  it("goes to the lowest-price node, and waits when contention would cost more than the job is worth", () => {
    const s = market([opp("a"), opp("b")]);
    const p = createPolicy("opportunity-cost");
    for (const [id, m, value] of [["rich", "a", 1000], ["poor", "b", 10]] as const) {
      const j = job(id, { kind: "constant", value });
      p.admit(s, j, 0, rng);
      s.assignTask({ ...j.tasks[0]!, jobId: id }, m, 0);
      s.taskStarted(`${id}.t0`, 0);
    }
    const d = p.admit(s, job("new", { kind: "constant", value: 100 }), 0, rng);
    expect(d).toMatchObject({ outcome: "admitted", placements: [{ machineId: "b" }] });
    const cheap = p.admit(s, job("cheap", { kind: "constant", value: 1 }), 0, rng);
    expect(cheap).toMatchObject({ outcome: "delayed", reasons: [{ code: "over-budget", budget: 1 }] });
  });
});
