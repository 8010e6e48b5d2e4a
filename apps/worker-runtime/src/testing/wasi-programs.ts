// The conformance programs of wasi-tests/, run under the sandbox and under the reference host
// with the same arguments, environment and stdin, so a test can compare what each printed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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
  /** The sandbox's memory limit in 64 KiB pages (default 1024, 64 MiB). */
  memoryPages?: number;
}

export interface ProgramOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout as bytes, for programs whose output is not text. */
  bytes: Uint8Array;
}

const PROGRAMS_DIR = fileURLToPath(new URL("../../wasi-tests/programs/", import.meta.url));

/** A conformance program, or a real-world one from wasi-tests/programs (such as bzip2). */
export function wasiProgram(name: string): Uint8Array {
  return readFileSync(programPath(name));
}

function programPath(name: string): string {
  return join(existsSync(join(PROGRAMS_DIR, `${name}.wasm`)) ? PROGRAMS_DIR : BUILD_DIR, `${name}.wasm`);
}

export async function runInSandbox(name: string, run: ProgramRun = {}): Promise<ProgramOutput> {
  const outcome = await runTask({
    module: wasiProgram(name),
    args: run.args ?? [],
    env: run.env ?? {},
    stdin: run.stdin,
    seed: `conformance/${name}`,
    limits: { memoryPages: run.memoryPages ?? 1024, outputBytes: 1 << 20 },
  });
  if (outcome.error) throw new Error(`${name} failed in the sandbox: ${outcome.error.code}: ${outcome.error.message}`);
  const text = new TextDecoder();
  return { exitCode: outcome.exitCode, stdout: text.decode(outcome.stdout), stderr: text.decode(outcome.stderr), bytes: outcome.stdout };
}

/**
 * Runs in a fresh, empty directory preopened as "/", like the sandbox's file system. Node's WASI
 * calls are run without V8's fast API calls: with them, Node 20 crashes at exit once a module's
 * memory has grown past about 48 MiB (as xz's default preset makes it).
 */
export function runInReference(name: string, run: ProgramRun = {}): ProgramOutput {
  const root = mkdtempSync(join(tmpdir(), `wasi-ref-${name}-`));
  try {
    const r = spawnSync(
      process.execPath,
      ["--no-warnings", "--no-turbo-fast-api-calls", REFERENCE_HOST, programPath(name), root, JSON.stringify(run.env ?? {}), ...(run.args ?? [])],
      { input: run.stdin ?? new Uint8Array(0), timeout: 30_000, maxBuffer: 64 << 20 },
    );
    if (r.error) throw r.error;
    const text = new TextDecoder();
    return { exitCode: r.status ?? -1, stdout: text.decode(r.stdout), stderr: text.decode(r.stderr), bytes: new Uint8Array(r.stdout) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
