import { afterAll, describe, expect, it } from "vitest";
import type { RegisterRequest, WorkerApi } from "./api.ts";
import { fromBase64 } from "./base64.ts";
import { EXAMPLES } from "./examples.ts";
import { createNodePool } from "./node/pool.ts";
import { runProducer, type MachineProfile, type ProducerEvent } from "./producer.ts";
import { sha256Hex } from "./sandbox.ts";
import { FakeMarket } from "./testing/fake-market.ts";
import { LOOP_WAT, exampleBytes, wat } from "./testing/fixtures.ts";

const machine: MachineProfile = {
  name: "test machine",
  kind: "opportunistic",
  speed: 1,
  memoryPerSlotMb: 64,
  bandwidthBytesPerSecond: 1e6,
  pricePerSecond: 1,
  userAgent: "vitest",
};
const limits = { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 };
const pool = createNodePool({ slots: 2 });
afterAll(() => pool.close());

function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (condition()) resolve();
      else if (Date.now() > deadline) reject(new Error("condition not met in time"));
      else setTimeout(check, 10);
    };
    check();
  });
}

describe("runProducer", () => {
  it("leases Monte Carlo tasks, runs them on the Node pool and reports each under its lease", async () => {
    const market = new FakeMarket();
    const moduleHash = await market.addModule(exampleBytes("montecarlo"));
    const params = EXAMPLES.montecarlo.params.parse({ samplesPerTask: 200_000 });
    for (let i = 0; i < 6; i++) {
      market.queue.push({ taskId: `job1/${i}`, jobId: "job1", moduleHash, args: EXAMPLES.montecarlo.taskArgs(i, 6, params), stdin: "", limits });
    }
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, slots: 2, signal: controller.signal, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50 } });

    await until(() => market.reports.length === 6);
    controller.abort();
    const summary = await done;

    expect(market.registered[0]).toMatchObject({ slots: 2, kind: "opportunistic" });
    expect(summary).toMatchObject({ machineId: "m1", tasksRun: 6, reportsAccepted: 6, reportsRefused: 0 });
    expect(market.maxOutstanding).toBeLessThanOrEqual(2);
    expect(new Set(market.reports.map((r) => r.leaseId)).size).toBe(6);
    for (const r of market.reports) {
      expect(r.exitCode).toBe(0);
      expect(r.outputHash).toBe(await sha256Hex(fromBase64(r.stdout)));
    }
    const pi = EXAMPLES.montecarlo.combine(market.reports.map((r) => new TextDecoder().decode(fromBase64(r.stdout)))).pi;
    expect(Math.abs(pi - Math.PI)).toBeLessThan(0.05);
    expect(market.departed).toEqual(["m1"]);
    const types = new Set(events.map((e) => e.type));
    for (const t of ["registered", "leased", "started", "finished", "reported", "idle", "departed"]) expect(types).toContain(t);
  });

  it("abandons a task whose lease expired, without reporting it, and frees the slot", async () => {
    const market = new FakeMarket();
    const loopHash = await market.addModule(wat(LOOP_WAT));
    const mcHash = await market.addModule(exampleBytes("montecarlo"));
    market.queue.push({ taskId: "slow", jobId: "j", moduleHash: loopHash, args: [], stdin: "", limits: { ...limits, wallMs: 60_000 } });
    market.expireOnHeartbeat.add("l0");
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, slots: 1, signal: controller.signal, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50 } });

    await until(() => events.some((e) => e.type === "abandoned"));
    market.queue.push({ taskId: "quick", jobId: "j", moduleHash: mcHash, args: ["1000"], stdin: "", limits });
    await until(() => market.reports.length === 1);
    controller.abort();
    await done;

    expect(events.find((e) => e.type === "abandoned")).toMatchObject({ leaseId: "l0", taskId: "slow", reason: "expired" });
    expect(market.reports.map((r) => r.leaseId)).toEqual(["l1"]);
    expect(market.heartbeats.some((ids) => ids.includes("l0"))).toBe(true);
  });

  it("reports a module whose bytes do not match their hash as invalid", async () => {
    const market = new FakeMarket();
    const hash = await market.addModule(exampleBytes("primes"));
    market.modules.set(hash, exampleBytes("montecarlo")); // served bytes differ from the hash
    market.queue.push({ taskId: "t", jobId: "j", moduleHash: hash, args: ["0", "10"], stdin: "", limits });
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, signal: controller.signal, idleBackoff: { minMs: 10, maxMs: 50 } });
    await until(() => market.reports.length === 1);
    controller.abort();
    await done;
    expect(market.reports[0]).toMatchObject({ exitCode: -1, error: { code: "invalid-module" } });
  });

  it("stops on abort while tasks run: gives them up, departs, and resolves", async () => {
    const market = new FakeMarket();
    const loopHash = await market.addModule(wat(LOOP_WAT));
    for (let i = 0; i < 2; i++) market.queue.push({ taskId: `t${i}`, jobId: "j", moduleHash: loopHash, args: [], stdin: "", limits: { ...limits, wallMs: 60_000 } });
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, slots: 2, signal: controller.signal, onEvent: (e) => events.push(e) });
    await until(() => events.filter((e) => e.type === "started").length === 2);
    const stopping = performance.now();
    controller.abort();
    const summary = await done;
    expect(performance.now() - stopping).toBeLessThan(2_000);
    expect(summary.abandoned).toBe(2);
    expect(market.reports).toHaveLength(0);
    expect(market.departed).toEqual(["m1"]);
  });

  it("retries registration while the market is unreachable", async () => {
    const market = new FakeMarket();
    let failures = 2;
    const flaky: WorkerApi = Object.assign(Object.create(market) as FakeMarket, {
      register: async (input: RegisterRequest) => {
        if (failures-- > 0) throw new Error("connection refused");
        return market.register(input);
      },
    });
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: flaky, executor: pool, machine, signal: controller.signal, onEvent: (e) => events.push(e) });
    await until(() => events.some((e) => e.type === "registered"));
    controller.abort();
    await done;
    expect(events.filter((e) => e.type === "error" && e.stage === "register")).toHaveLength(2);
  });
});
