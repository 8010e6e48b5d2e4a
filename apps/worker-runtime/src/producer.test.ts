import { afterAll, describe, expect, it } from "vitest";
import type { HeartbeatRequest, LeaseRequest, RegisterRequest, ReportManyRequest, ReportRequest, WorkerApi } from "./api.ts";
import { fromBase64 } from "./base64.ts";
import { EXAMPLES } from "./examples.ts";
import { createNodePool } from "./node/pool.ts";
import { PREFETCH_BELOW_MS, refusalOf, runProducer, type MachineProfile, type ProducerEvent } from "./producer.ts";
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
    // At most twice the slots leased (the market's own bound), and never more than the slots running.
    expect(market.maxOutstanding).toBeLessThanOrEqual(4);
    let runningNow = 0;
    let mostRunning = 0;
    for (const e of events) {
      if (e.type === "started") mostRunning = Math.max(mostRunning, ++runningNow);
      else if (e.type === "finished") runningNow--;
    }
    expect(mostRunning).toBe(2);
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

  it("holds a spare lease per slot while tasks are short, so a slot's next task does not wait for the market", async () => {
    const one = createNodePool({ slots: 1 });
    try {
      const run = async (prefetch?: number) => {
        const market = new FakeMarket();
        const hash = await market.addModule(exampleBytes("montecarlo"));
        // Tasks of tens of milliseconds, longer than the market's answer takes.
        for (let i = 0; i < 8; i++) market.queue.push({ taskId: `t${i}`, jobId: "j", moduleHash: hash, args: ["3000000", String(i)], stdin: "", limits });
        // A market slow to answer, taking reports with the ask for the next tasks as the real one
        // does: a slot without a spare lease waits for the answer.
        const later = () => new Promise((w) => setTimeout(w, 10));
        const slow: WorkerApi = Object.assign(Object.create(market) as FakeMarket, {
          lease: async (input: LeaseRequest) => (await later(), market.lease(input)),
          reportMany: async ({ reports, lease }: ReportManyRequest) => {
            await later();
            const answers = await Promise.all(reports.map((r) => market.report(r)));
            return { answers, ...(lease ? { leases: (await market.lease(lease)).leases } : {}) };
          },
        });
        const events: ProducerEvent[] = [];
        const controller = new AbortController();
        const done = runProducer({ api: slow, executor: one, machine, signal: controller.signal, onEvent: (e) => events.push(e), ...(prefetch === undefined ? {} : { prefetch }) });
        await until(() => market.reports.length === 8);
        controller.abort();
        await done;
        const leasedAt = (taskId: string) => events.findIndex((e) => e.type === "leased" && e.leases.some((l) => l.taskId === taskId));
        const finishedAt = (taskId: string) => events.findIndex((e) => e.type === "finished" && e.taskId === taskId);
        // Tasks already held when the task before them finished: their slot took them at once.
        const ready = [...Array(7).keys()].filter((i) => leasedAt(`t${i + 1}`) < finishedAt(`t${i}`)).length;
        return { outstanding: market.maxOutstanding, ready, accepted: market.reports.length };
      };
      const spare = await run();
      expect(spare.accepted).toBe(8);
      expect(spare.outstanding).toBe(2);
      expect(spare.ready).toBeGreaterThanOrEqual(4);
      const none = await run(0);
      expect(none.accepted).toBe(8);
      expect(none.outstanding).toBe(1);
    } finally {
      await one.close();
    }
  });

  it("holds no spare lease while tasks run long, so an idle machine could take the next", async () => {
    const one = createNodePool({ slots: 1 });
    try {
      const market = new FakeMarket();
      const loopHash = await market.addModule(wat(LOOP_WAT));
      // Each runs past PREFETCH_BELOW_MS, to its wall time.
      for (let i = 0; i < 2; i++) market.queue.push({ taskId: `long${i}`, jobId: "j", moduleHash: loopHash, args: [], stdin: "", limits: { ...limits, wallMs: PREFETCH_BELOW_MS + 50 } });
      const controller = new AbortController();
      const done = runProducer({ api: market, executor: one, machine, signal: controller.signal, idleBackoff: { minMs: 10, maxMs: 50 } });
      await until(() => market.reports.length === 2);
      controller.abort();
      await done;
      expect(market.reports.map((r) => r.error?.code)).toEqual(["timeout", "timeout"]);
      expect(market.maxOutstanding).toBe(1);
    } finally {
      await one.close();
    }
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

  it("fetches a module again while the market is too busy to send it, and runs the task", async () => {
    const market = new FakeMarket();
    const hash = await market.addModule(exampleBytes("montecarlo"));
    let busy = 2;
    const overloaded: WorkerApi = Object.assign(Object.create(market) as FakeMarket, {
      module: async (input: { moduleHash: string }) => {
        if (busy-- > 0) throw Object.assign(new Error("The market is busy; try again."), { data: { code: "SERVICE_UNAVAILABLE" } });
        return market.module(input);
      },
    });
    market.queue.push({ taskId: "t", jobId: "j", moduleHash: hash, args: ["20000", "1"], stdin: "", limits });
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: overloaded, executor: pool, machine, signal: controller.signal, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50 }, reportBackoff: { minMs: 10, maxMs: 50 } });
    await until(() => market.reports.length === 1);
    controller.abort();
    await done;
    expect(market.reports[0]).toMatchObject({ exitCode: 0 });
    expect(market.reports[0]!.error).toBeUndefined();
    expect(events.filter((e) => e.type === "error" && e.stage === "module")).toHaveLength(2);
  });

  it("reports a module the market does not have as invalid at once", async () => {
    const market = new FakeMarket();
    market.queue.push({ taskId: "t", jobId: "j", moduleHash: "0".repeat(64), args: [], stdin: "", limits });
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

  it("stops at once, saying why, when the market does not accept its token", async () => {
    const market = new FakeMarket();
    let attempts = 0;
    const refused: WorkerApi = Object.assign(Object.create(market) as FakeMarket, {
      register: async () => {
        attempts++;
        throw Object.assign(new Error("This API token is not accepted: it is unknown or was revoked."), { data: { code: "UNAUTHORIZED", httpStatus: 401 } });
      },
    });
    const events: ProducerEvent[] = [];
    const run = runProducer({ api: refused, executor: pool, machine, signal: new AbortController().signal, onEvent: (e) => events.push(e) });
    await expect(run).rejects.toThrow(/refused this machine: This API token is not accepted/);
    expect(attempts).toBe(1);
  });

  it("keeps a result through a market outage and delivers it once the market is back", async () => {
    const market = new OutageMarket();
    const mcHash = await market.addModule(exampleBytes("montecarlo"));
    for (let i = 0; i < 2; i++) market.queue.push({ taskId: `t${i}`, jobId: "j", moduleHash: mcHash, args: ["20000", String(i)], stdin: "", limits });
    market.downAfterLease = true; // the market goes away right after handing out the first task
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({
      api: market,
      executor: pool,
      machine,
      slots: 1,
      signal: controller.signal,
      onEvent: (e) => events.push(e),
      idleBackoff: { minMs: 10, maxMs: 50 },
      reportBackoff: { minMs: 10, maxMs: 50 },
    });
    await until(() => events.filter((e) => e.type === "error" && e.stage === "report").length >= 5);
    expect(market.reports).toHaveLength(0);
    market.down = false;
    await until(() => market.reports.length === 2);
    controller.abort();
    const summary = await done;
    // The first result arrived once, under its lease, after the outage; the loop carried on.
    expect(market.reports.map((r) => r.leaseId)).toEqual(["l0", "l1"]);
    expect(summary).toMatchObject({ reportsAccepted: 2, reportsRefused: 0, abandoned: 0 });
    expect(events.filter((e) => e.type === "registered")).toHaveLength(1);
  });

  it("stops retrying a result the market refuses as stale", async () => {
    const market = new OutageMarket();
    const mcHash = await market.addModule(exampleBytes("montecarlo"));
    market.queue.push({ taskId: "t", jobId: "j", moduleHash: mcHash, args: ["1000"], stdin: "", limits });
    market.refuseReports = { code: "CONFLICT", reason: { code: "stale-lease" } };
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, signal: controller.signal, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50 }, reportBackoff: { minMs: 10, maxMs: 50 } });
    await until(() => events.some((e) => e.type === "reported"));
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    const summary = await done;
    expect(market.reportCalls).toBe(1);
    expect(events.find((e) => e.type === "reported")).toMatchObject({ accepted: false, reason: { code: "stale-lease" } });
    expect(summary).toMatchObject({ reportsAccepted: 0, reportsRefused: 1 });
    expect(events.filter((e) => e.type === "registered")).toHaveLength(1);
  });

  it("registers again when the market says its machine departed, giving up that machine's tasks", async () => {
    const market = new OutageMarket();
    const loopHash = await market.addModule(wat(LOOP_WAT));
    const mcHash = await market.addModule(exampleBytes("montecarlo"));
    market.queue.push({ taskId: "slow", jobId: "j", moduleHash: loopHash, args: [], stdin: "", limits: { ...limits, wallMs: 60_000 } });
    const events: ProducerEvent[] = [];
    const controller = new AbortController();
    const done = runProducer({ api: market, executor: pool, machine, slots: 1, signal: controller.signal, onEvent: (e) => events.push(e), idleBackoff: { minMs: 10, maxMs: 50 } });
    await until(() => events.some((e) => e.type === "started"));
    // The market declared m1 departed (it missed heartbeats) and abandoned its lease.
    market.departedMachines.add("m1");
    market.leases.clear();
    market.queue.push({ taskId: "quick", jobId: "j", moduleHash: mcHash, args: ["1000"], stdin: "", limits });
    await until(() => market.reports.length === 1);
    controller.abort();
    const summary = await done;
    expect(events.filter((e) => e.type === "registered").map((e) => e.type === "registered" && e.machineId)).toEqual(["m1", "m2"]);
    expect(events.find((e) => e.type === "abandoned")).toMatchObject({ taskId: "slow", reason: "expired" });
    // The new task was leased and reported by the new machine; the old task was not reported.
    expect(market.reports).toMatchObject([{ machineId: "m2", leaseId: "l1" }]);
    expect(market.leaseCalls.some((c) => c.machineId === "m2")).toBe(true);
    expect(summary).toMatchObject({ machineId: "m2", reportsAccepted: 1, abandoned: 1 });
    expect(market.departed).toEqual(["m2"]);
  });

  it("runs many short tasks on one slot without piling up listeners on the stop signal", async () => {
    const market = new FakeMarket();
    const mcHash = await market.addModule(exampleBytes("montecarlo"));
    for (let i = 0; i < 30; i++) market.queue.push({ taskId: `t${i}`, jobId: "j", moduleHash: mcHash, args: ["1000", String(i)], stdin: "", limits });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const controller = new AbortController();
      const done = runProducer({ api: market, executor: pool, machine, slots: 1, signal: controller.signal });
      await until(() => market.reports.length === 30);
      controller.abort();
      await done;
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });

  it("tells a refusal from a call that got no answer", () => {
    expect(refusalOf({ data: { code: "CONFLICT", reason: { code: "stale-lease" } } })).toEqual({ code: "stale-lease" });
    expect(refusalOf({ data: { code: "UNAUTHORIZED", reason: null } })).toEqual({ code: "UNAUTHORIZED" });
    expect(refusalOf({ data: { code: "INTERNAL_SERVER_ERROR", reason: null } })).toBeNull();
    expect(refusalOf(new TypeError("fetch failed"))).toBeNull();
  });
});

/** The fake market, able to go away, to refuse reports, and to forget machines. */
class OutageMarket extends FakeMarket {
  down = false;
  downAfterLease = false;
  refuseReports: { code: string; reason: { code: string } } | null = null;
  departedMachines = new Set<string>();
  reportCalls = 0;
  leaseCalls: LeaseRequest[] = [];
  private registrations = 0;

  private check(machineId?: string) {
    if (this.down) throw new TypeError("fetch failed");
    if (machineId && this.departedMachines.has(machineId)) {
      throw Object.assign(new Error("This machine is no longer in the market; register again."), {
        data: { code: "CONFLICT", reason: { code: "machine-departed", machineId } },
      });
    }
  }
  override async register(input: RegisterRequest) {
    this.check();
    const answer = await super.register(input);
    return { ...answer, machineId: `m${++this.registrations}` };
  }
  override async lease(input: LeaseRequest) {
    this.check(input.machineId);
    this.leaseCalls.push(input);
    const answer = await super.lease(input);
    if (this.downAfterLease && answer.leases.length) {
      this.downAfterLease = false;
      this.down = true;
    }
    return answer;
  }
  override async heartbeat(input: HeartbeatRequest) {
    this.check(input.machineId);
    return super.heartbeat(input);
  }
  override async report(input: ReportRequest) {
    this.reportCalls++;
    this.check(input.machineId);
    if (this.refuseReports) throw Object.assign(new Error("refused"), { data: this.refuseReports });
    return super.report(input);
  }
}
