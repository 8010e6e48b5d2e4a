// Each conformance program (wasi-tests/src) runs under the sandbox and under Node's WASI host
// with the same arguments, environment and stdin (both as pipes); they must print the same lines.
import { describe, expect, it } from "vitest";
import { runInReference, runInSandbox, wasiProgram } from "../testing/wasi-programs.ts";
import { ALLOWED_WASI_IMPORTS, WASI_MODULE } from "../wasi-host.ts";

const COMPARED = ["args_env", "clocks", "dirs", "files", "links", "poll", "random", "rights", "streams", "times"];
const run = {
  args: ["one", "", "héllo wörld", "--flag=x y"],
  env: { GREETING: "hi there", EMPTY: "", WITH_EQUALS: "a=b", UNICODE: "ünï" },
  stdin: new TextEncoder().encode("a line of stdin\n".repeat(1000)),
};

/**
 * The lines where the reference host is not POSIX: it sleeps and polls on a timer of whole
 * milliseconds that can fire early on a busy machine (seen: a 2 ms nanosleep and a 3 ms poll
 * timeout measured shorter), while a sleep lasts at least what was asked. The sandbox must say
 * so; the reference's lines are not compared.
 */
const SLEPT = /^(slept at least 2 ms|waited at least 3 ms): [01]$/gm;
const comparable = (stdout: string) => stdout.replace(SLEPT, "$1: (the host's timer)");

describe("the sandbox's WASI calls, against the reference host", () => {
  for (const name of COMPARED) {
    it(`${name}: prints what the reference host prints`, async () => {
      const reference = runInReference(name, run);
      expect(reference.exitCode).toBe(0);
      expect(reference.stdout.split("\n").length).toBeGreaterThan(4);
      const sandbox = await runInSandbox(name, run);
      for (const [, line] of reference.stdout.matchAll(SLEPT)) expect(sandbox.stdout).toContain(`${line}: 1`);
      expect(comparable(sandbox.stdout)).toBe(comparable(reference.stdout));
      expect(sandbox.stderr).toBe(reference.stderr);
      expect(sandbox.exitCode).toBe(reference.exitCode);
    });
  }

  it("presents stdin, stdout and stderr as pipes, so programs that refuse a terminal write", async () => {
    const { stdout } = await runInSandbox("streams", run);
    for (const fd of [0, 1, 2]) expect(stdout).toContain(`fd${fd} filetype 6 read 1 write 1 seek 0 tell 0 isatty 0`);
    expect(stdout).toContain("stdin bytes: 16000");
  });

  it("exercises every allowed call but proc_raise (which a C program reaches only through emulated signals)", () => {
    const used = new Set<string>();
    for (const name of [...COMPARED, "sandbox_only", "inputs"]) {
      const module = new WebAssembly.Module(wasiProgram(name) as Uint8Array<ArrayBuffer>);
      for (const i of WebAssembly.Module.imports(module)) if (i.module === WASI_MODULE) used.add(i.name);
    }
    expect(ALLOWED_WASI_IMPORTS.filter((name) => !used.has(name))).toEqual(["proc_raise"]);
  });
});
