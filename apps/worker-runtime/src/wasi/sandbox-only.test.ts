// What the sandbox answers where the reference host departs from POSIX or the specification
// (wasi-tests/src/sandbox_only.c says which and why), and the task's input files and scratch.
import { describe, expect, it } from "vitest";
import { runTask } from "../sandbox.ts";
import { runInSandbox, wasiProgram } from "../testing/wasi-programs.ts";
import { PAGE_BYTES } from "../wasm-binary.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("the sandbox where the reference host is not a guide", () => {
  it("follows POSIX and the specification", async () => {
    const { stdout, exitCode } = await runInSandbox("sandbox_only");
    expect(exitCode).toBe(0);
    expect(stdout.split("\n")).toEqual([
      "open nofollow: err 32",
      "readlink short buffer: 4",
      "readlink text: a-lo",
      "utimensat exact: ok",
      "atime 1000000000.123456789 mtime 1100000000.987654321",
      "clear append: errno 0",
      "append flag: 0",
      "write at offset 0: 1",
      'after write at 0: "Data"',
      "poll absolute: errno 0",
      "events 1 id 5 reached deadline 1",
      "poll stdout: errno 0",
      "events 1 id 6 type 2 error 0",
      "shutdown stdout: err 57",
      "shutdown preopen: err 8",
      "shutdown closed: err 8",
      "recv stdin: err 57",
      "send stdout: err 57",
      "accept file: err 57",
      "",
    ]);
  });
});

describe("input files and scratch space", () => {
  const files = { "data/in.txt": new TextEncoder().encode("input contents") };
  const run = (scratchBytes: number, memoryPages: number) =>
    runTask({
      module: wasiProgram("inputs"),
      args: ["/data/in.txt", String(scratchBytes)],
      files,
      seed: "inputs",
      limits: { memoryPages, outputBytes: 1 << 16 },
    });

  it("mounts input files read-only under / and gives a writable scratch area", async () => {
    const r = await run(300_000, 1024);
    expect(r.error).toBeUndefined();
    expect(text(r.stdout).split("\n")).toEqual([
      'input: "input contents"',
      "open input for writing: err 2",
      "truncate input: err 2",
      "mkdir scratch: ok",
      "scratch bytes: 300000",
      "",
    ]);
  });

  it("counts scratch files within the task's memory limit", async () => {
    const memoryPages = 256; // 16 MiB for memory and files together
    const r = await run(32 << 20, memoryPages);
    expect(text(r.stdout)).toMatch(/scratch write failed after \d+ bytes: err 51/);
    const written = Number(/after (\d+) bytes/.exec(text(r.stdout))![1]);
    expect(written).toBeLessThan(memoryPages * PAGE_BYTES);
    expect(written).toBeGreaterThan(memoryPages * PAGE_BYTES * 0.75);
    expect(r.error?.code).toBe("memory-limit");
  });

  it("refuses input file names that leave the root before running anything", async () => {
    for (const name of ["../escape", "/abs", "a/../../b", "nul\0byte"]) {
      const r = await runTask({ module: wasiProgram("inputs"), args: [], files: { [name]: new Uint8Array(1) }, seed: "s", limits: { memoryPages: 64, outputBytes: 1024 } });
      expect(r.error?.code).toBe("invalid-module");
      expect(r.stdout.length).toBe(0);
    }
  });
});
