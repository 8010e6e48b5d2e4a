import { describe, expect, it } from "vitest";
import { commitDecision } from "../commit.ts";
import { createRng } from "../rng.ts";
import { job, market, opp } from "../test-fixtures.ts";
import { createPolicy } from "./policy.ts";

const rng = createRng(7);

describe("tickets (the Computational Co-op paper, Computational Co-op)", () => {
  // Jobs x and y each run one task and queue another; a third machine falls idle.
  function contended(valueX: number, valueY: number, migration: "least-usage" | "none" = "least-usage") {
    const s = market([opp("a"), opp("b")]);
    const p = createPolicy("tickets", { migration: { rule: migration } });
    const x = job("x", { kind: "constant", value: valueX }, [{ work: 50 }, { work: 50 }]);
    const y = job("y", { kind: "constant", value: valueY }, [{ work: 50 }, { work: 50 }]);
    for (const [j, m] of [[x, "a"], [y, "b"]] as const) {
      p.admit(s, j, 0, rng); // the policy learns the job's tickets (its maximum benefit)
      s.assignTask({ ...j.tasks[0]!, jobId: j.id }, m, 0);
      s.taskStarted(j.tasks[0]!.id, 0);
      s.assignTask({ ...j.tasks[1]!, jobId: j.id }, m, 0);
    }
    s.upsertMachine(opp("c"), 1);
    return p.tick(s, 1, rng).moves;
  }

  it("gives a free row to the job with the least resources used per ticket", () => {
    // Both hold one slot: x has 100 tickets (r/t = 0.01), y has 10 (r/t = 0.1).
    expect(contended(100, 10)).toEqual([
      { taskId: "x.t1", fromMachineId: "a", toMachineId: "c", reasons: [{ code: "least-usage-per-ticket", jobId: "x", usagePerTicket: 0.01, tickets: 100 }] },
    ]);
    // Swap the tickets and the slot goes to y.
    expect(contended(10, 100)[0]).toMatchObject({ taskId: "y.t1", toMachineId: "c" });
  });

  it("moves nothing when its profile's migration rule is none", () => {
    expect(contended(100, 10, "none")).toEqual([]);
  });

  it("never preempts: a job arriving when every row is taken waits, oldest first", () => {
    const s = market([opp("a")]);
    const p = createPolicy("tickets");
    const first = job("first", { kind: "constant", value: 10 });
    const d1 = p.admit(s, first, 0, rng);
    expect(d1.outcome).toBe("admitted");
    commitDecision(s, first, d1, 0);
    s.taskStarted("first.t0", 0);
    const rich = job("rich", { kind: "constant", value: 1e6 }, [{}], { arrivedAt: 1 });
    const d2 = p.admit(s, rich, 1, rng);
    expect(d2).toMatchObject({ outcome: "delayed", reasons: [{ code: "waiting-for-slot", freeSlots: 0, jobsAhead: 0 }] });
    commitDecision(s, rich, d2, 1);
    s.taskFinished("first.t0", 10, 10);
    expect(p.tick(s, 10, rng).reevaluate).toEqual(["rich"]);
    expect(p.admit(s, rich, 10, rng)).toMatchObject({ outcome: "admitted", placements: [{ machineId: "a" }] });
  });

  it("refuses a task longer than p_max on every machine instead of starting a run that would be killed", () => {
    const s = market([opp("a", { speed: 2 })]);
    const d = createPolicy("tickets", { terms: { pMaxSeconds: 100 } }).admit(s, job("long", { kind: "constant", value: 10 }, [{ work: 300 }]), 0, rng);
    expect(d).toMatchObject({ outcome: "rejected", reasons: [{ code: "over-p-max", runSeconds: 150, pMaxSeconds: 100 }] });
  });
});
