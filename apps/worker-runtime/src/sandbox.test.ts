import { describe, expect, it } from "vitest";
import { PROGRAM_NAME, runTask, sha256Hex } from "./sandbox.ts";
import { CAT_WAT, ENTROPY_WAT, FLOOD_WAT, MEMORY_HOG_WAT, READ_FILE_WAT, exampleBytes, importingWat, wat } from "./testing/fixtures.ts";
import { VIRTUAL_EPOCH_NS } from "./wasi-host.ts";

const limits = { memoryPages: 256, outputBytes: 1 << 20 };
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("runTask", () => {
  it("runs a WASI command with its arguments and reports stdout, exit code and hash", async () => {
    const r = await runTask({ module: exampleBytes("primes"), args: ["0", "100000"], seed: "t1", limits });
    expect(r.error).toBeUndefined();
    expect(r.exitCode).toBe(0);
    expect(text(r.stdout)).toBe("0 100000 9592\n");
    expect(r.outputHash).toBe(await sha256Hex(r.stdout));
  });

  it("passes the exit code and stderr of a program that fails by itself", async () => {
    const r = await runTask({ module: exampleBytes("primes"), args: [], seed: "t1", limits });
    expect(r.exitCode).toBe(2);
    expect(text(r.stderr)).toContain("usage: primes");
    expect(r.error).toBeUndefined();
  });

  it("gives byte-identical output for the same seed and different output for another", async () => {
    const module = exampleBytes("montecarlo");
    const run = (seed: string) => runTask({ module, args: ["200000"], seed, limits });
    const [a, b, c] = await Promise.all([run("job1/task7"), run("job1/task7"), run("job1/task8")]);
    expect(a.stdout).toEqual(b.stdout);
    expect(a.outputHash).toBe(b.outputHash);
    expect(c.outputHash).not.toBe(a.outputHash);
  });

  it("serves random bytes and clocks from the seed, not from the host", async () => {
    const module = wat(ENTROPY_WAT);
    const a = await runTask({ module, args: [], seed: "s", limits });
    const b = await runTask({ module, args: [], seed: "s", limits });
    expect(a.stdout).toEqual(b.stdout);
    const view = new DataView(a.stdout.buffer, a.stdout.byteOffset);
    const realtime = view.getBigUint64(16, true);
    expect(realtime > VIRTUAL_EPOCH_NS && realtime < VIRTUAL_EPOCH_NS + 1_000_000_000n).toBe(true);
    expect(view.getBigUint64(24, true) < 1_000_000_000n).toBe(true);
  });

  it("feeds stdin and in-memory files", async () => {
    const stdin = new TextEncoder().encode("hello from stdin");
    const cat = await runTask({ module: wat(CAT_WAT), args: [], stdin, seed: "s", limits });
    expect(text(cat.stdout)).toBe("hello from stdin");
    const file = await runTask({
      module: wat(READ_FILE_WAT),
      args: [],
      files: { "data/in.txt": new TextEncoder().encode("file contents") },
      seed: "s",
      limits,
    });
    expect(file.exitCode).toBe(0);
    expect(text(file.stdout)).toBe("file contents");
  });

  it("ends a task that raises a signal as a trap", async () => {
    const r = await runTask({ module: wat(importingWat("wasi_snapshot_preview1", "proc_raise")), args: [], seed: "s", limits });
    expect(r.exitCode).toBe(-1);
    expect(r.error).toEqual({ code: "trap", message: "the task raised signal 0" });
  });

  it("passes the program name then the task's arguments", async () => {
    // primes echoes its range: argv[1] and argv[2] are the first two task arguments.
    const r = await runTask({ module: exampleBytes("primes"), args: ["10", "20"], seed: "s", limits });
    expect(text(r.stdout)).toBe("10 20 4\n");
    expect(PROGRAM_NAME).toBe("task.wasm");
  });

  it("cuts stdout at the output limit and says so", async () => {
    const r = await runTask({ module: wat(FLOOD_WAT), args: [], seed: "s", limits: { memoryPages: 16, outputBytes: 10_000 } });
    expect(r.error?.code).toBe("output-limit");
    expect(r.exitCode).toBe(-1);
    expect(r.stdout.length).toBe(10_000);
    expect(r.outputHash).toBe(await sha256Hex(r.stdout));
  });

  it("stops memory growth at the memory limit", async () => {
    const r = await runTask({ module: wat(MEMORY_HOG_WAT), args: [], seed: "s", limits: { memoryPages: 8, outputBytes: 100 } });
    expect(r.error?.code).toBe("memory-limit");
  });

  it("reports a trap with its message", async () => {
    const trap = wat(`(module (memory (export "memory") 1) (func (export "_start") unreachable))`);
    const r = await runTask({ module: trap, args: [], seed: "s", limits });
    expect(r.error?.code).toBe("trap");
    expect(r.error?.message).toMatch(/unreachable/);
  });

  it("refuses a module importing what the sandbox does not serve", async () => {
    const r = await runTask({ module: wat(importingWat("wasi_snapshot_preview1", "sock_open")), args: [], seed: "s", limits });
    expect(r.error?.code).toBe("invalid-module");
    expect(r.error?.message).toContain("sock_open");
  });

  it("refuses bytes that are not WebAssembly", async () => {
    const r = await runTask({ module: new TextEncoder().encode("#!/bin/sh\necho hi\n"), args: [], seed: "s", limits });
    expect(r.error?.code).toBe("invalid-module");
  });
});
