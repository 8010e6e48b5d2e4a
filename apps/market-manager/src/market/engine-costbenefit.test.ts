import { describe, expect, it } from "vitest";
import { DEFAULT_CONTROLS } from "@cyclemarket/worker-runtime";
import { createEngine } from "./engine-costbenefit.ts";
import type { LiveMachine } from "./live.ts";
import { TaskQueue } from "./task-queue.ts";

// The service decides, writes the decision down, then commits it to the engine; a machine
// registers without waiting for the market's lock, so it may join in between.

const machine: LiveMachine = {
  id: "m", ownerId: "producer", name: "m", kind: "opportunistic", slots: 4, speed: 1, benchmarkSpeed: 1, network: null, memoryPerSlotMb: 512, pricePerSecondMicro: 1000n,
  reputation: 1, contractPriceMicro: null, departsAt: null, contractStartAt: null, contractPaidUntil: null, contractPaidMicro: 0n, unprovenExpiries: 0,
  queue: new TaskQueue(), leases: new Set(), lastHeartbeatAt: 0, controls: DEFAULT_CONTROLS, localAvailable: true,
};

describe("the live engine", () => {
  it("asks a job delayed for want of machines again at the next tick when a machine joined while its decision was written", () => {
    const engine = createEngine();
    const spec = { id: "j", arrivedAt: 1_000, tasks: [{ id: "t", work: 1, memoryMb: 64, bytes: 0 }], benefit: { kind: "constant" as const, value: 100 }, replicas: 1 };
    const decision = engine.decide(spec, 1_000);
    expect(decision.outcome).toBe("delayed");
    engine.addMachine(machine, 1_010);
    engine.commit(spec, decision);
    expect(engine.tick(1_020).reevaluate).toEqual(["j"]);
    expect(engine.decide(spec, 1_020).outcome).toBe("admitted");
  });
});
