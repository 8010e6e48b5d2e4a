import { describe, expect, it } from "vitest";
import { handoffPlan, MAX_HANDED_PER_BEAT } from "./machine-handoff.ts";
import type { ManagerView } from "./managers.ts";

const view = (id: string, machines: number, alive = true): ManagerView => ({
  id,
  url: `http://${id}`,
  healthUrl: null,
  machines,
  jobs: 0,
  capacity: 10_000,
  tasksDone: 0,
  startedAt: 0,
  heartbeatAt: 0,
  alive,
  claimedBy: null,
  tasksPerSecond: 0,
});
const plan = (own: number, others: ManagerView[]) => handoffPlan([view("me", -1), ...others], "me", own).map((p) => [p.to.id, p.count]);

describe("which machines a manager hands to others", () => {
  it("a manager back with nothing gets a fair share from the one that took over its machines", () => {
    expect(plan(4, [view("b", 0)])).toEqual([["b", 2]]);
    expect(plan(5, [view("b", 0), view("c", 1)])).toEqual([["b", 2], ["c", 1]]);
  });

  it("nothing moves at or under the fair share, so a balanced market stays as it is", () => {
    expect(plan(2, [view("b", 2), view("c", 1)])).toEqual([]);
    expect(plan(1, [view("b", 2)])).toEqual([]);
    expect(plan(3, [view("b", 3)])).toEqual([]);
  });

  it("a dead manager is given nothing and counts for no share", () => {
    expect(plan(4, [view("b", 0, false)])).toEqual([]);
    expect(plan(6, [view("b", 0, false), view("c", 0)])).toEqual([["c", 3]]);
  });

  it("hands at most a bounded number at one stamp", () => {
    expect(plan(10_000, [view("b", 0)])).toEqual([["b", MAX_HANDED_PER_BEAT]]);
  });
});
