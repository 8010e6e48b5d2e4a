// A path resolves beneath the directory descriptor it starts from (wasi-tests/src/beneath.c):
// ".." above that directory is ENOTCAPABLE, and a link may neither point to an absolute path nor
// lead above the directory a path started from. The official WASI test suite asks the same
// (interesting_paths: PERM or NOTCAPABLE for too many ".."; symlink_create: an absolute target
// refused). Where the reference host agrees, the lines are compared with it.
import { describe, expect, it } from "vitest";
import { runInReference, runInSandbox } from "../testing/wasi-programs.ts";

const NOTCAPABLE = 76;
const PERM = 63;

/** The lines of the program's output, by label. */
const lines = (stdout: string) => new Map(stdout.split("\n").filter((l) => l.includes(": ")).map((l) => [l.slice(0, l.lastIndexOf(": ")), l.slice(l.lastIndexOf(": ") + 2)]));

/** Where the reference host checks ".." only against the path as written (the result back under the descriptor, or anywhere under its own root). */
const LAX_IN_REFERENCE = ["d: ../d/e/f", "preopen: ..", "preopen: ../top", "preopen: d/../../top"];

describe("paths beneath their directory descriptor", async () => {
  const sandbox = await runInSandbox("beneath");
  const got = lines(sandbox.stdout);

  it("refuses '..' above the starting directory with ENOTCAPABLE, above the root too", () => {
    expect(sandbox.exitCode).toBe(0);
    for (const ok of ["d: e/../e/f", "d: e/..", "preopen: d/e/../../top"]) expect(got.get(ok)).toBe("errno 0");
    for (const above of ["d: ..", "d: ../top", "d: e/../../top", "d: ../d/e/f", "preopen: ..", "preopen: ../top", "preopen: d/../../top"]) {
      expect(got.get(above), above).toBe(`errno ${NOTCAPABLE}`);
    }
  });

  it("refuses to make a link to an absolute path, and follows no link above the starting directory", () => {
    expect(got.get("symlink to /top")).toBe(`errno ${PERM}`);
    expect(got.get("symlink to /")).toBe(`errno ${PERM}`);
    expect(got.get("preopen: abs")).toBe("errno 44"); // never made
    expect(got.get("symlink d/e/up to ../../top")).toBe("errno 0");
    expect(got.get("preopen: d/e/up")).toBe("errno 0");
    expect(got.get("d: e/up")).toBe(`errno ${NOTCAPABLE}`);
    expect(got.get("d: e/in")).toBe("errno 0");
    expect(got.get("through d/e/up from /")).toBe('"top"');
  });

  it("answers as the reference host wherever it checks the same", () => {
    const reference = runInReference("beneath");
    expect(reference.exitCode).toBe(0);
    const theirs = lines(reference.stdout);
    expect([...theirs.keys()]).toEqual([...got.keys()]);
    for (const [label, answer] of theirs) if (!LAX_IN_REFERENCE.includes(label)) expect(got.get(label), label).toBe(answer);
  });
});
