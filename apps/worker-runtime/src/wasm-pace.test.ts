// The CPU limit inside a task: a paced module computes exactly what it computes unpaced, keeps
// the limit while it runs, and its rests do not count against its wall-time limit.
import { afterAll, describe, expect, it } from "vitest";
import { SlotPacer } from "./controls/pacer.ts";
import { createNodePool } from "./node/pool.ts";
import { compileTaskModule, runTask, sha256Hex } from "./sandbox.ts";
import { exampleBytes } from "./testing/fixtures.ts";
import { wasiProgram } from "./testing/wasi-programs.ts";
import { PACE_IMPORT, paceModule } from "./wasm-pace.ts";

const limits = { memoryPages: 2048, outputBytes: 1 << 22 };
const text = new TextEncoder().encode("It is the 1998 market rebuilt with today's web. ".repeat(2_000));

const programs: { name: string; bytes: () => Uint8Array; args: string[]; stdin?: Uint8Array }[] = [
  { name: "primes (AssemblyScript)", bytes: () => exampleBytes("primes"), args: ["0", "20000"] },
  { name: "mandelbrot (AssemblyScript)", bytes: () => exampleBytes("mandelbrot"), args: ["0", "0", "64", "256", "500"] },
  { name: "bench_cpu (C)", bytes: () => wasiProgram("bench_cpu"), args: ["1"] },
  { name: "gzip 1.12", bytes: () => wasiProgram("gzip"), args: ["-c"], stdin: text },
  { name: "bzip2 1.0.8", bytes: () => wasiProgram("bzip2"), args: ["-c", "-9"], stdin: text },
  { name: "xz 5.4.1", bytes: () => wasiProgram("xz"), args: ["-c"], stdin: text },
];

describe("pacing a module", () => {
  it.each(programs)("$name prints the same bytes paced as unpaced, at any limit", async ({ bytes, args, stdin }) => {
    const plain = await runTask({ module: await compileTaskModule(bytes(), limits.memoryPages), args, stdin, seed: "s", limits });
    expect(plain.error).toBeUndefined();
    expect(plain.stdout.length).toBeGreaterThan(0);
    const paced = await compileTaskModule(bytes(), limits.memoryPages, true);
    expect(WebAssembly.Module.imports(paced)).toContainEqual({ ...PACE_IMPORT, kind: "function" });
    for (const limit of [100, 60]) {
      const run = await runTask({ module: paced, args, stdin, seed: "s", limits, pacing: new SlotPacer(limit).cells });
      expect(run.error).toBeUndefined();
      expect(run.exitCode).toBe(plain.exitCode);
      expect(run.outputHash).toBe(plain.outputHash);
      expect(run.restedMs).toBeGreaterThanOrEqual(0);
    }
  });

  it("refuses nothing the engine accepts: the rewritten binary of every program validates", () => {
    for (const { bytes } of programs) expect(WebAssembly.validate(paceModule(bytes()) as Uint8Array<ArrayBuffer>)).toBe(true);
  });

  it("is not served to a module that was not paced by the market: a module importing the pace call itself is refused", async () => {
    const paced = paceModule(exampleBytes("primes"));
    const run = await runTask({ module: paced, args: ["0", "10"], seed: "s", limits });
    expect(run.error?.code).toBe("invalid-module");
    expect(run.error?.message).toContain("cyclemarket.pace");
  });

  it("keeps a CPU limit of 25% while a CPU-heavy task runs: it rests about three times as long as it computes", async () => {
    const module = await compileTaskModule(wasiProgram("bench_cpu"), limits.memoryPages, true);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const run = await runTask({ module, args: ["2"], seed: "s", limits, pacing: new SlotPacer(25).cells });
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    expect(run.error).toBeUndefined();
    const computedMs = run.elapsedMs - run.restedMs!;
    // Rests follow each 100 ms of running, so the last stretch of the run may go unrested.
    expect(run.restedMs!).toBeGreaterThan(2.2 * (computedMs - 100));
    // The process's CPU time over the run: about a quarter of one core, never most of it.
    expect((cpu.user + cpu.system) / 1000 / wallMs).toBeLessThan(0.45);
  }, 30_000);
});

describe("a Node pool under a CPU limit", () => {
  const pool = createNodePool({ slots: 1 });
  afterAll(() => pool.close());

  it("runs tasks paced, and their rests do not count against the task's wall-time limit", async () => {
    const module = wasiProgram("bench_cpu");
    const moduleHash = await sha256Hex(module);
    // Long enough to compute past several 100 ms stretches on a fast machine (each is followed by a rest).
    const request = (wallMs: number) => ({ moduleHash, module, args: ["3"], seed: "s", limits: { ...limits, wallMs } });
    // The task's time unpaced on this machine now; the limit below is twice that.
    const plain = await pool.run(request(60_000));
    expect(plain.error).toBeUndefined();
    expect(plain.restedMs).toBeUndefined();

    pool.setCpuLimit(10);
    const paced = await pool.run(request(Math.max(500, 2 * plain.elapsedMs)));
    expect(paced.error).toBeUndefined();
    expect(paced.outputHash).toBe(plain.outputHash);
    // At 10% it rested about nine times its run (less its last stretch), far past the wall-time
    // limit, and was not stopped.
    expect(paced.restedMs!).toBeGreaterThan(2 * plain.elapsedMs);

    pool.setCpuLimit(100);
    const again = await pool.run(request(60_000));
    expect(again.restedMs).toBeUndefined();
  }, 60_000);
});
