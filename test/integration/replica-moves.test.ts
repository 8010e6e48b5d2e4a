import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { catJob } from "../support/worker.ts";
import { rebalance } from "../../apps/market-manager/src/market/rebalance.ts";

// Rebalancing moves a queued task to a machine where it costs less. A task's copies verify each
// other only on machines of different owners, so a copy never moves next to another copy of
// itself: the planner never places it there, and a move must not either (a copy queued on one of
// an owner's machines while its sibling waits on another of them would wait there for good).

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

async function owner(name: string, machines: string[]) {
  const client = await market.signUp(`${name}@${name}.test`, ["producer"]);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
  const ids: string[] = [];
  for (const m of machines) ids.push((await worker.worker.register.mutate({ name: m, kind: "opportunistic", slots: 2, speed: 2, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.1, userAgent: "test" })).machineId);
  return ids;
}

describe("a queued copy of a task", () => {
  it("never moves to a machine whose owner holds another copy of it, and moves elsewhere as before", async () => {
    const live = market.manager.services.market;
    const [ann1, ann2] = await owner("ann", ["ann-1", "ann-2"]);
    const [bob1] = await owner("bob", ["bob-1"]);
    const consumer = await market.signUp("pairs@pairs.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate({ ...catJob(2, { value: 300, workPerTask: 30 }), replicas: 2 });
    expect(decision.outcome).toBe("admitted");
    const copies = () => [...live.state.tasks.values()].filter((t) => t.jobId === jobId);
    const before = new Map(copies().map((t) => [t.id, t.machineId]));
    // Each task has a copy on one of ann's machines and one on bob's: moving bob's copies to ann's machines would put both copies with ann.
    const onBob = copies().filter((t) => t.machineId === bob1);
    expect(onBob).toHaveLength(2);
    const moved = await live.serial(async () =>
      rebalance(
        live,
        onBob.flatMap((t) => [ann1!, ann2!].map((to) => ({ taskId: t.id, fromMachineId: bob1!, toMachineId: to, reasons: [] }))),
        live.clock.now(),
      ),
    );
    expect(moved).toBe(0);
    expect(new Map(copies().map((t) => [t.id, t.machineId]))).toEqual(before);
    // A machine of a third owner may take one.
    const [carol1] = await owner("carol", ["carol-1"]);
    const one = onBob[0]!;
    expect(await live.serial(async () => rebalance(live, [{ taskId: one.id, fromMachineId: bob1!, toMachineId: carol1!, reasons: [] }], live.clock.now()))).toBe(1);
    expect(live.state.tasks.get(one.id)?.machineId).toBe(carol1);
    await consumer.jobs.cancel.mutate({ jobId });
  });
});
