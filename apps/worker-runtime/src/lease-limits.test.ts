// A lease's environment, input files and limits reach the task through the producer loop and
// the Node pool, and the limits enforced are the lease's own, not defaults.
import { afterAll, describe, expect, it } from "vitest";
import type { Lease } from "./api.ts";
import { fromBase64, toBase64 } from "./base64.ts";
import { createNodePool } from "./node/pool.ts";
import { runProducer, type MachineProfile } from "./producer.ts";
import { FakeMarket } from "./testing/fake-market.ts";
import { LOOP_WAT, wat } from "./testing/fixtures.ts";
import { wasiProgram } from "./testing/wasi-programs.ts";

const machine: MachineProfile = {
  name: "limits machine",
  kind: "dedicated",
  speed: 1,
  memoryPerSlotMb: 512,
  bandwidthBytesPerSecond: 1e6,
  pricePerSecond: 1,
  userAgent: "vitest",
};
const pool = createNodePool({ slots: 2 });
afterAll(() => pool.close());

type Task = Omit<Lease, "leaseId" | "expiresAt" | "moduleHash" | "jobId" | "stdin">;

/** Runs each task through the producer loop against an in-memory market and returns the reports by task id. */
async function produce(module: Uint8Array, tasks: Task[]) {
  const market = new FakeMarket();
  const moduleHash = await market.addModule(module);
  for (const t of tasks) market.queue.push({ ...t, jobId: "job", moduleHash, stdin: "" });
  const controller = new AbortController();
  const done = runProducer({ api: market, executor: pool, machine, slots: 2, signal: controller.signal, idleBackoff: { minMs: 10, maxMs: 50 } });
  const deadline = Date.now() + 20_000;
  while (market.reports.length < tasks.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await done;
  const byTask = new Map(market.reports.map((r) => [market.leaseTask(r.leaseId), r]));
  return (taskId: string) => {
    const r = byTask.get(taskId);
    if (!r) throw new Error(`no report for ${taskId}`);
    return { ...r, text: new TextDecoder().decode(fromBase64(r.stdout)) };
  };
}

const limits = { wallMs: 10_000, memoryPages: 1024, outputBytes: 1 << 16 };

describe("a lease's inputs and limits", () => {
  it("gives the task the lease's environment", async () => {
    const report = await produce(wasiProgram("args_env"), [{ taskId: "env", args: ["a"], env: { GREETING: "from the lease", OTHER: "1" }, limits }]);
    expect(report("env").text).toContain("getenv GREETING = from the lease\n");
    expect(report("env").text).toContain("environ count: 2\n");
  });

  it("mounts the lease's input files and enforces its memory limit on memory and scratch together", async () => {
    const files = { "data/in.txt": toBase64(new TextEncoder().encode("from the lease")) };
    const task = (taskId: string, memoryPages: number): Task => ({ taskId, args: ["data/in.txt", String(24 << 20)], files, limits: { ...limits, memoryPages } });
    const report = await produce(wasiProgram("inputs"), [task("roomy", 1024), task("tight", 256)]);
    expect(report("roomy").error).toBeUndefined();
    expect(report("roomy").text).toContain('input: "from the lease"');
    expect(report("roomy").text).toContain(`scratch bytes: ${24 << 20}`);
    expect(report("tight").error?.code).toBe("memory-limit");
  });

  it("stops a task at the lease's wall time", async () => {
    const report = await produce(wat(LOOP_WAT), [
      { taskId: "short", args: [], limits: { ...limits, wallMs: 300 } },
      { taskId: "long", args: [], limits: { ...limits, wallMs: 1500 } },
    ]);
    expect(report("short").error?.code).toBe("timeout");
    expect(report("long").error?.code).toBe("timeout");
    expect(report("short").elapsedMs).toBeGreaterThanOrEqual(300);
    expect(report("short").elapsedMs).toBeLessThan(1200);
    expect(report("long").elapsedMs).toBeGreaterThanOrEqual(1500);
  });
});
