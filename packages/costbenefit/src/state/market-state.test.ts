import { describe, expect, it } from "vitest";
import { market, opp } from "../test-fixtures.ts";

describe("MarketState", () => {
  it("returns the tasks of a departed machine so they can be placed again", () => {
    const s = market([opp("a"), opp("b")]);
    s.assignTask({ id: "t1", jobId: "j", work: 5, memoryMb: 10, bytes: 100 }, "a", 0);
    s.assignTask({ id: "t2", jobId: "j", work: 7, memoryMb: 10, bytes: 100 }, "a", 0);
    s.assignTask({ id: "t3", jobId: "j", work: 1, memoryMb: 10, bytes: 100 }, "b", 0);
    s.taskStarted("t1", 1);
    const back = s.removeMachine("a", 2);
    expect(back.map((t) => t.id).sort()).toEqual(["t1", "t2"]);
    expect(back[0]!.jobId).toBe("j");
    expect(s.hasMachine("a")).toBe(false);
    expect(s.tasks.has("t1")).toBe(false);
    expect(s.committedBytes).toBe(100);
    expect(s.machineCount).toBe(1);
  });

  it("drains a running task's backlog at the row speed and forgets it when it finishes", () => {
    const s = market([opp("a", { speed: 2 })]);
    s.assignTask({ id: "t", jobId: "j", work: 20, memoryMb: 100, bytes: 0 }, "a", 0);
    expect(s.machine("a", 0)!.backlogSeconds).toBe(10);
    s.taskStarted("t", 0);
    expect(s.machine("a", 4)!.backlogSeconds).toBeCloseTo(6);
    expect(s.machine("a", 4)!.memoryUsedMb).toBe(100);
    s.taskFinished("t", 9, 9);
    const v = s.machine("a", 9)!;
    expect(v.backlogSeconds).toBe(0);
    expect(v.memoryUsedMb).toBe(0);
    expect(v.taskIds).toEqual([]);
  });

  it("keeps queued work in the backlog until it starts", () => {
    const s = market([opp("a")]);
    s.assignTask({ id: "t", jobId: "j", work: 20, memoryMb: 0, bytes: 0 }, "a", 0);
    expect(s.machine("a", 50)!.backlogSeconds).toBe(20);
  });

  it("updates a machine's profile in place, keeping its tasks", () => {
    const s = market([opp("a")]);
    s.assignTask({ id: "t", jobId: "j", work: 20, memoryMb: 0, bytes: 0 }, "a", 0);
    s.upsertMachine(opp("a", { speed: 4 }), 0);
    expect(s.machineCount).toBe(1);
    expect(s.machine("a", 0)!.backlogSeconds).toBe(5);
  });

  it("refuses invalid machine profiles and settings with readable messages", () => {
    const s = market([]);
    expect(() => s.upsertMachine(opp("x", { speed: -1 }), 0)).toThrow(/positive/);
    expect(() => s.updateSettings({ horizonSeconds: 0 })).toThrow(/positive/);
    s.updateSettings({ priceConstant: 5 });
    expect(s.settings.priceConstant).toBe(5);
    expect(s.settings.horizonSeconds).toBe(100);
  });

  it("moves a task between machines, carrying its work", () => {
    const s = market([opp("a"), opp("b")]);
    s.assignTask({ id: "t", jobId: "j", work: 20, memoryMb: 0, bytes: 0 }, "a", 0);
    s.moveTask("t", "b", 1);
    expect(s.machine("a", 1)!.backlogSeconds).toBe(0);
    expect(s.machine("b", 1)!.taskIds).toEqual(["t"]);
    expect(s.machine("b", 1)!.backlogSeconds).toBe(20);
  });

  it("moves a running task with the progress its machine measured, not full-speed progress", () => {
    const s = market([opp("a"), opp("b")]);
    s.assignTask({ id: "t", jobId: "j", work: 20, memoryMb: 0, bytes: 0 }, "a", 0);
    s.taskStarted("t", 0);
    // Sharing its machine, the task did only 4 of the 10 units a lone task would have done by t = 10.
    s.reportTaskProgress("t", 16, 10);
    expect(s.remainingOf(s.tasks.get("t")!, 10)).toBeCloseTo(16);
    s.moveTask("t", "b", 10);
    expect(s.machine("b", 10)!.backlogSeconds).toBeCloseTo(16);
  });
});
