import { describe, expect, it } from "vitest";
import { commitDecision } from "../commit.ts";
import { createRng } from "../rng.ts";
import { job, market, opp } from "../test-fixtures.ts";
import { createPolicy } from "./policy.ts";

const rng = createRng(7);
// Budget = the curve's value, interval = its deadline: b/t credits per second.
const bid = (value: number) => ({ kind: "deadline" as const, value, deadline: 100 });

describe("continuous-bid (the Tycoon paper, Tycoon)", () => {
  it("gives each bid a share (b/t) / sum(b/t), and charges b/t only for the seconds it runs", () => {
    for (const [mine, expected] of [[300, 0.75], [100, 0.5], [50, 1 / 3]] as const) {
      const s = market([opp("a")]);
      const p = createPolicy("continuous-bid");
      const first = job("first", bid(100));
      commitDecision(s, first, p.admit(s, first, 0, rng), 0);
      s.taskStarted("first.t0", 0);
      const d = p.admit(s, job("mine", bid(mine)), 0, rng);
      expect(d.outcome).toBe("admitted");
      const r = d.reasons[0]!;
      if (r.code !== "continuous-bid") throw new Error(r.code);
      expect(r.bidPerSecond).toBe(mine / 100);
      expect(r.hostBidsPerSecond).toBe(1);
      expect(r.share).toBeCloseTo(expected);
      // 10 work units at `expected` of a speed-1 slot, paying b/t per second of it.
      expect(r.expectedCharge).toBeCloseTo(((mine / 100) * 10) / expected);
    }
  });

  it("rebids at each tick: a task moves to the machine where its bid buys more", () => {
    const s = market([opp("a"), opp("b")]);
    const p = createPolicy("continuous-bid");
    for (const id of ["x", "y"]) {
      const j = job(id, bid(100), [{ work: 50 }]);
      p.admit(s, j, 0, rng);
      s.assignTask({ ...j.tasks[0]!, jobId: id }, "a", 0);
      s.taskStarted(`${id}.t0`, 0);
    }
    const moves = p.tick(s, 1, rng).moves;
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ fromMachineId: "a", toMachineId: "b", reasons: [{ code: "rebid", progressBefore: 0.5, progressAfter: 1 }] });
  });
});
