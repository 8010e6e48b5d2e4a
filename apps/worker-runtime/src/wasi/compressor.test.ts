// Unmodified real-world programs: bzip2 1.0.8, gzip 1.12 and xz 5.4.1, each built from Debian's
// source package (wasi-tests/programs/build-*.sh). They refuse to write compressed data to a
// terminal, so they run only if stdout is presented as a pipe; their output must match the
// reference host's bytes, and decompressing it must give the input back.
import { describe, expect, it } from "vitest";
import { runInReference, runInSandbox } from "../testing/wasi-programs.ts";

const input = new TextEncoder().encode(Array.from({ length: 4000 }, (_, i) => `line ${i}: ${"abcdefgh".repeat(i % 7)}\n`).join(""));

// xz's default preset needs about 94 MiB to compress, so its tasks get 128 MiB.
const compressors = [
  { name: "bzip2", args: ["-c", "-9"], magic: [0x42, 0x5a, 0x68], memoryPages: 1024 },
  { name: "gzip", args: ["-c"], magic: [0x1f, 0x8b], memoryPages: 1024 },
  { name: "xz", args: ["-c"], magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], memoryPages: 2048 },
];

describe.each(compressors)("$name in the sandbox", ({ name, args, magic, memoryPages }) => {
  it("compresses stdin to stdout, byte for byte as under the reference host", async () => {
    const sandbox = await runInSandbox(name, { args, stdin: input, memoryPages });
    expect(sandbox.stderr).toBe("");
    expect(sandbox.exitCode).toBe(0);
    expect([...sandbox.bytes.subarray(0, magic.length)]).toEqual(magic);
    expect(sandbox.bytes.length).toBeLessThan(input.length / 5);
    const reference = runInReference(name, { args, stdin: input });
    expect(reference.exitCode).toBe(0);
    expect(sandbox.bytes).toEqual(reference.bytes);
  });

  it("decompresses what it compressed", async () => {
    const packed = await runInSandbox(name, { args, stdin: input, memoryPages });
    const unpacked = await runInSandbox(name, { args: ["-d", "-c"], stdin: packed.bytes, memoryPages });
    expect(unpacked.stderr).toBe("");
    expect(unpacked.exitCode).toBe(0);
    expect(unpacked.bytes).toEqual(input);
  });
});
