import { afterAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../sandbox.ts";
import { LOOP_WAT, exampleBytes, wat } from "../testing/fixtures.ts";
import { createNodePool } from "./pool.ts";

const pool = createNodePool({ slots: 2 });
afterAll(() => pool.close());

const montecarlo = exampleBytes("montecarlo");
const limits = { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 };
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("Node pool", () => {
  it("runs tasks on worker threads with the same output as the sandbox gives anywhere", async () => {
    const moduleHash = await sha256Hex(montecarlo);
    const request = { moduleHash, module: montecarlo, args: ["100000"], seed: "job/1", limits };
    const [a, b] = await Promise.all([pool.run(request), pool.run(request)]);
    expect(a.error).toBeUndefined();
    expect(text(a.stdout)).toMatch(/^\d+ 100000\n$/);
    expect(a.outputHash).toBe(b.outputHash);
  });

  it("stops a runaway module at its wall-time limit and keeps serving", async () => {
    const loop = wat(LOOP_WAT);
    const started = performance.now();
    const r = await pool.run({ moduleHash: await sha256Hex(loop), module: loop, args: [], seed: "s", limits: { ...limits, wallMs: 300 } });
    expect(r.error?.code).toBe("timeout");
    expect(r.exitCode).toBe(-1);
    expect(performance.now() - started).toBeLessThan(5_000);

    const after = await pool.run({ moduleHash: await sha256Hex(montecarlo), module: montecarlo, args: ["1000"], seed: "s", limits });
    expect(after.error).toBeUndefined();
  });

  it("runs at most `slots` tasks at once and queues the rest", async () => {
    const loop = wat(LOOP_WAT);
    const moduleHash = await sha256Hex(loop);
    const started = performance.now();
    const runs = [0, 1, 2, 3].map(() => pool.run({ moduleHash, module: loop, args: [], seed: "s", limits: { ...limits, wallMs: 400 } }));
    const outcomes = await Promise.all(runs);
    expect(outcomes.every((o) => o.error?.code === "timeout")).toBe(true);
    // Two rounds of two: the second pair started only when the first was stopped.
    expect(performance.now() - started).toBeGreaterThanOrEqual(790);
  });

  it("gives a task up when its signal aborts", async () => {
    const loop = wat(LOOP_WAT);
    const controller = new AbortController();
    const run = pool.run({ moduleHash: await sha256Hex(loop), module: loop, args: [], seed: "s", limits }, controller.signal);
    setTimeout(() => controller.abort(), 300);
    const r = await run;
    expect(r.error?.code).toBe("aborted");
  });

  it("reports a module that does not compile", async () => {
    const junk = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]);
    const r = await pool.run({ moduleHash: "junk", module: junk, args: [], seed: "s", limits });
    expect(r.error?.code).toBe("invalid-module");
  });

  it("benchmarks on a pool thread", async () => {
    const b = await pool.benchmark(100);
    expect(b.speed).toBeGreaterThan(0);
  });
});
