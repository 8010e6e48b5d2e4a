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

  it("weighs the others' machines since their stamps, so a burst spread evenly moves nothing", () => {
    const behind = (n: Record<string, number>) => (m: ManagerView) => n[m.id] ?? 0;
    // Three managers gaining alike: this one's count now is ahead of the others' stamps.
    expect(plan(50, [view("b", 40), view("c", 45)])).toEqual([["b", 5]]);
    expect(handoffPlan([view("me", -1), view("b", 40), view("c", 45)], "me", 50, behind({ b: 10, c: 10 }))).toEqual([]);
    // Really over its share whatever the others gained since: it still hands the rest.
    expect(handoffPlan([view("me", -1), view("b", 0), view("c", 10)], "me", 60, behind({ c: 5 })).map((p) => [p.to.id, p.count])).toEqual([["b", 25], ["c", 10]]);
  });

  it("hands at most a bounded number at one stamp", () => {
    expect(plan(10_000, [view("b", 0)])).toEqual([["b", MAX_HANDED_PER_BEAT]]);
  });
});
