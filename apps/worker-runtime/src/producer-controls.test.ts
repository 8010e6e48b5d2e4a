import { afterAll, describe, expect, it } from "vitest";
import { EXAMPLES } from "./examples.ts";
import { createNodePool } from "./node/pool.ts";
import { runProducer, type MachineProfile, type ProducerEvent } from "./producer.ts";
import type { MachineControlsPatch } from "./controls/machine-controls.ts";
import { FakeMarket } from "./testing/fake-market.ts";
import { exampleBytes } from "./testing/fixtures.ts";

// The producer loop under the producer's controls, against an in-memory market and real
// sandbox threads: what leases it asks for, what it tells the market, how long slots rest.

const machine: MachineProfile = { name: "controlled", kind: "opportunistic", speed: 1, memoryPerSlotMb: 64, bandwidthBytesPerSecond: 1e6, pricePerSecond: 1, userAgent: "vitest" };
const limits = { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 };
const pool = createNodePool({ slots: 1 });
// A host that cannot pace inside a task (a browser page that is not cross-origin isolated).
const unpacedPool = createNodePool({ slots: 1, pacing: false });
afterAll(() => Promise.all([pool.close(), unpacedPool.close()]));

function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => (condition() ? resolve() : Date.now() > deadline ? reject(new Error("condition not met in time")) : setTimeout(check, 10));
    check();
  });
}

async function withTasks(count: number, samples = 200_000) {
  const market = new FakeMarket();
  const moduleHash = await market.addModule(exampleBytes("montecarlo"));
  const params = EXAMPLES.montecarlo.params.parse({ samplesPerTask: samples });
  for (let i = 0; i < count; i++) market.queue.push({ taskId: `j/${i}`, jobId: "j", moduleHash, args: EXAMPLES.montecarlo.taskArgs(i, count, params), stdin: "", limits });
  return market;
}

function channel() {
  let listener: ((patch: MachineControlsPatch) => void) | null = null;
  return {
    subscribe: (l: (patch: MachineControlsPatch) => void) => ((listener = l), () => (listener = null)),
    send: (patch: MachineControlsPatch) => listener?.(patch),
  };
}

describe("the producer loop under the producer's controls", () => {
  it("asks for no work while paused, and takes work again once resumed from the page", async () => {
    const market = await withTasks(2);
    const changes = channel();
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, signal: controller.signal, controls: { paused: true }, controlChanges: changes.subscribe, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50, liveMs: 50 }, conditionsEveryMs: 20 });
    await until(() => market.registered.length === 1);
    await new Promise((r) => setTimeout(r, 400));
    expect(market.registered[0]!.controls).toMatchObject({ paused: true });
    expect(market.leaseTimes).toEqual([]);
    expect(events.find((e) => e.type === "capacity")).toMatchObject({ offering: false, reason: "paused" });

    changes.send({ paused: false });
    await until(() => market.reports.length === 2);
    expect(market.offers.at(-1)).toMatchObject({ controls: { paused: false } });
    expect(events.filter((e) => e.type === "capacity").at(-1)).toMatchObject({ offering: true });
    controller.abort();
    await done;
  });

  it("keeps a CPU limit inside each task where the host can pace: the task rests as long as it computes", async () => {
    const market = await withTasks(3, 50_000_000);
    const finished: { elapsedMs: number; restedMs?: number }[] = [];
    const controller = new AbortController();
    const done = runProducer({
      api: market, executor: pool, machine, signal: controller.signal, controls: { cpuLimit: 50 },
      onEvent: (e) => e.type === "finished" && finished.push(e), idleBackoff: { minMs: 10, maxMs: 50 },
    });
    await until(() => market.reports.length === 3, 30_000);
    controller.abort();
    await done;
    for (const { elapsedMs, restedMs } of finished) {
      expect(restedMs).toBeGreaterThan(100);
      // A rest follows each 100 ms of computing, so the last stretch may go unrested.
      expect(restedMs!).toBeGreaterThanOrEqual(elapsedMs - restedMs! - 110);
    }
    // The slot does not rest again between tasks: the next lease follows the report at once.
    const gaps = market.leaseTimes.slice(1, 3).map((t, i) => t - market.leaseTimes[i]!);
    for (const [i, gap] of gaps.entries()) expect(gap).toBeLessThan(1.5 * finished[i]!.elapsedMs + 100);
  }, 60_000);

  it("rests a slot after each task under a CPU limit where the host cannot pace, so the slot is busy about that share of the time", async () => {
    const market = await withTasks(3, 3_000_000);
    const finished: number[] = [];
    const controller = new AbortController();
    const done = runProducer({
      api: market, executor: unpacedPool, machine, signal: controller.signal, controls: { cpuLimit: 50 },
      onEvent: (e) => e.type === "finished" && finished.push(e.elapsedMs), idleBackoff: { minMs: 10, maxMs: 50 },
    });
    await until(() => market.reports.length === 3, 30_000);
    controller.abort();
    await done;
    // Leases that found work: the first, then one after each rest. Each gap is at least run + rest = 2 x run.
    const gaps = market.leaseTimes.slice(1, 3).map((t, i) => t - market.leaseTimes[i]!);
    for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(2 * finished[i]! - 5);
  });

  it("tells the market its capacity is off while its owner uses the machine, and hands leased tasks back when asked", async () => {
    const market = await withTasks(1, 50_000_000);
    let ownerIdle = true;
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({
      api: market, executor: pool, machine, signal: controller.signal, controls: { onlyIdle: true, handBack: "now" },
      ownerActivity: { ownerIdle: () => ownerIdle }, conditionsEveryMs: 20, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50, liveMs: 50 },
    });
    await until(() => events.some((e) => e.type === "started"));
    ownerIdle = false;
    await until(() => events.some((e) => e.type === "abandoned"));
    expect(events.find((e) => e.type === "abandoned")).toMatchObject({ reason: "handed-back" });
    await until(() => market.offers.some((o) => o.available === false));
    const calls = market.leaseTimes.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(market.leaseTimes.length).toBe(calls);
    expect(market.reports).toEqual([]);
    ownerIdle = true;
    await until(() => market.offers.at(-1)?.available === true);
    controller.abort();
    await done;
  });
});
