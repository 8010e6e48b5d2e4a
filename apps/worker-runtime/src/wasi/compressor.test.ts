// An unmodified real-world program: bzip2 1.0.8 from Debian's source package
// (wasi-tests/programs/build-bzip2.sh). It refuses to write compressed data to a terminal, so it
// runs only if stdout is presented as a pipe; its output must match the reference host's bytes.
import { describe, expect, it } from "vitest";
import { runInReference, runInSandbox } from "../testing/wasi-programs.ts";

const input = new TextEncoder().encode(Array.from({ length: 4000 }, (_, i) => `line ${i}: ${"abcdefgh".repeat(i % 7)}\n`).join(""));

describe("bzip2 in the sandbox", () => {
  it("compresses stdin to stdout, byte for byte as under the reference host", async () => {
    const sandbox = await runInSandbox("bzip2", { args: ["-c", "-9"], stdin: input });
    expect(sandbox.stderr).toBe("");
    expect(sandbox.exitCode).toBe(0);
    expect(new TextDecoder().decode(sandbox.bytes.subarray(0, 3))).toBe("BZh");
    expect(sandbox.bytes.length).toBeLessThan(input.length / 5);
    const reference = runInReference("bzip2", { args: ["-c", "-9"], stdin: input });
    expect(sandbox.bytes).toEqual(reference.bytes);
  });

  it("decompresses what it compressed", async () => {
    const packed = await runInSandbox("bzip2", { args: ["-c"], stdin: input });
    const unpacked = await runInSandbox("bzip2", { args: ["-d", "-c"], stdin: packed.bytes });
    expect(unpacked.exitCode).toBe(0);
    expect(unpacked.bytes).toEqual(input);
  });
});
