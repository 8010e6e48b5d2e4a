// The conformance programs of wasi-tests/, run under the sandbox and under the reference host
// with the same arguments, environment and stdin, so a test can compare what each printed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTask } from "../sandbox.ts";

const BUILD_DIR = fileURLToPath(new URL("../../wasi-tests/build/", import.meta.url));
const REFERENCE_HOST = fileURLToPath(new URL("./reference-host.mjs", import.meta.url));

export interface ProgramRun {
  args?: string[];
  env?: Record<string, string>;
  stdin?: Uint8Array;
}

export interface ProgramOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function wasiProgram(name: string): Uint8Array {
  return readFileSync(join(BUILD_DIR, `${name}.wasm`));
}

export async function runInSandbox(name: string, run: ProgramRun = {}): Promise<ProgramOutput> {
  const outcome = await runTask({
    module: wasiProgram(name),
    args: run.args ?? [],
    env: run.env ?? {},
    stdin: run.stdin,
    seed: `conformance/${name}`,
    limits: { memoryPages: 1024, outputBytes: 1 << 20 },
  });
  if (outcome.error) throw new Error(`${name} failed in the sandbox: ${outcome.error.code}: ${outcome.error.message}`);
  const text = new TextDecoder();
  return { exitCode: outcome.exitCode, stdout: text.decode(outcome.stdout), stderr: text.decode(outcome.stderr) };
}

/** Runs in a fresh, empty directory preopened as "/", like the sandbox's file system. */
export function runInReference(name: string, run: ProgramRun = {}): ProgramOutput {
  const root = mkdtempSync(join(tmpdir(), `wasi-ref-${name}-`));
  try {
    const r = spawnSync(
      process.execPath,
      ["--no-warnings", REFERENCE_HOST, join(BUILD_DIR, `${name}.wasm`), root, JSON.stringify(run.env ?? {}), ...(run.args ?? [])],
      { input: run.stdin ?? new Uint8Array(0), encoding: "utf8", timeout: 30_000 },
    );
    if (r.error) throw r.error;
    return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
