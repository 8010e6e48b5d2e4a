// Runs one task: a WASI preview 1 command module with its arguments, stdin and small files,
// all in memory, with no network and no host file system. The same code runs in Node worker
// threads and in browser Web Workers (no node: imports here). Wall time is not enforced here:
// a module in an endless loop never returns control, so the host runs this in a thread it can
// terminate (src/node/pool.ts, src/browser.ts).
import { seedKey, seededRandom } from "./seeded-random.ts";
import { checkTaskEnv, checkTaskFiles, describeTaskInputRefusal } from "./task-inputs.ts";
import { MemoryLimitError, PAGE_BYTES, capMemory } from "./wasm-binary.ts";
import { TaskSignal, createWasiHost, isAllowedImport } from "./wasi-host.ts";
import { PACE_IMPORT, paceModule } from "./wasm-pace.ts";
import { threadPacer } from "./controls/pacer.ts";

export interface TaskLimits {
  /**
   * Largest memory the task may use, in 64 KiB pages: the module's linear memory (the cap is
   * written into its binary) plus the scratch files it writes, together.
   */
  memoryPages: number;
  /** Most stdout bytes kept; a task writing more is stopped with `output-limit`. */
  outputBytes: number;
}

export interface RunTaskInput {
  /** The module, or its bytes. Bytes get the memory limit written into the binary itself. */
  module: WebAssembly.Module | Uint8Array;
  /** Arguments after the program name; the task sees argv[0] = PROGRAM_NAME. */
  args: string[];
  stdin?: Uint8Array;
  /** Environment variables the task sees (environ_get). */
  env?: Record<string, string>;
  /** Read-only input files under "/", by relative path ("data/input.txt"); see task-inputs.ts. */
  files?: Record<string, Uint8Array>;
  /** The task id: keys the task's random source so honest machines agree byte for byte. */
  seed: string;
  limits: TaskLimits;
  /**
   * The slot's pacing cells (controls/pacer.ts) when the module was compiled paced
   * (compileTaskModule's `paced`): the task then keeps the producer's CPU limit while it runs.
   */
  pacing?: Int32Array;
}

export type SandboxErrorCode =
  | "trap" // the module trapped, threw, or raised a signal
  | "output-limit" // stdout passed limits.outputBytes
  | "memory-limit" // the module needed more memory than limits.memoryPages
  | "invalid-module" // did not compile, or imports something the sandbox does not serve
  | "timeout" // the host stopped it at the wall-time limit
  | "crashed" // the thread running it died
  | "aborted"; // the producer gave the task up (its lease expired, or the producer is leaving)

export interface SandboxError {
  code: SandboxErrorCode;
  message: string;
}

export interface TaskOutcome {
  /** The process exit code; -1 when the task did not exit by itself (see error). */
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** SHA-256 of stdout, lower-case hex: what verification compares across machines. */
  outputHash: string;
  elapsedMs: number;
  /** Milliseconds the task rested to keep the producer's CPU limit; present when it ran paced. */
  restedMs?: number;
  error?: SandboxError;
}

export const PROGRAM_NAME = "task.wasm";
/** Stderr is for diagnostics; it is cut silently past this size. */
export const STDERR_LIMIT_BYTES = 64 * 1024;

class OutputLimitExceeded extends Error {}

class BoundedBuffer {
  private chunks: Uint8Array[] = [];
  size = 0;
  truncated = false;
  constructor(private readonly limit: number) {}

  /** Keeps what fits; returns false when some bytes did not. */
  push(data: Uint8Array): boolean {
    const room = this.limit - this.size;
    const kept = data.length <= room ? data : data.subarray(0, Math.max(0, room));
    if (kept.length > 0) {
      this.chunks.push(kept.slice());
      this.size += kept.length;
    }
    if (kept.length < data.length) this.truncated = true;
    return kept.length === data.length;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/**
 * Compiles a module with the memory limit written into it, and paced (wasm-pace.ts) when asked;
 * the pools cache the result per hash, limit and pacing. Throws PaceUnsupported when the module
 * cannot be paced (the caller then compiles it unpaced).
 */
export async function compileTaskModule(bytes: Uint8Array, memoryPages: number, paced = false): Promise<WebAssembly.Module> {
  const capped = capMemory(bytes, memoryPages);
  return WebAssembly.compile((paced ? paceModule(capped) : capped) as Uint8Array<ArrayBuffer>);
}

/** SHA-256 of no bytes: the output hash of a task that produced nothing. */
export const EMPTY_OUTPUT_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** The outcome of a task that ended without output: refused, stopped, or lost with its thread. */
export function failedOutcome(code: SandboxErrorCode, message: string, elapsedMs: number): TaskOutcome {
  return {
    exitCode: -1,
    stdout: new Uint8Array(0),
    stderr: new Uint8Array(0),
    outputHash: EMPTY_OUTPUT_HASH,
    elapsedMs,
    error: { code, message },
  };
}

async function failure(code: SandboxErrorCode, message: string, started: number): Promise<TaskOutcome> {
  return failedOutcome(code, message, performance.now() - started);
}

export async function runTask(input: RunTaskInput): Promise<TaskOutcome> {
  const started = performance.now();
  const { limits } = input;

  let module: WebAssembly.Module;
  try {
    module = input.module instanceof WebAssembly.Module ? input.module : await compileTaskModule(input.module, limits.memoryPages);
  } catch (e) {
    if (e instanceof MemoryLimitError) return failure("memory-limit", e.message, started);
    return failure("invalid-module", `the module does not compile: ${errorText(e)}`, started);
  }
  const pacer = input.pacing ? threadPacer(input.pacing) : null;
  const isPace = (i: { module: string; name: string }) => pacer !== null && i.module === PACE_IMPORT.module && i.name === PACE_IMPORT.name;
  const forbidden = WebAssembly.Module.imports(module).find((i) => !isAllowedImport(i.module, i.name) && !isPace(i));
  if (forbidden) return failure("invalid-module", `the module imports ${forbidden.module}.${forbidden.name}, which the sandbox does not provide`, started);

  const files = input.files ?? {};
  const refusal = checkTaskFiles(Object.keys(files)) ?? checkTaskEnv(input.env ?? {});
  if (refusal) return failure("invalid-module", describeTaskInputRefusal(refusal), started);

  const stdout = new BoundedBuffer(limits.outputBytes);
  const stderr = new BoundedBuffer(STDERR_LIMIT_BYTES);
  const limitBytes = limits.memoryPages * PAGE_BYTES;
  let memory: WebAssembly.Memory | undefined;
  let scratchBytes = 0;
  let scratchRefused = false;
  const host = createWasiHost({
    args: [PROGRAM_NAME, ...input.args],
    env: input.env ?? {},
    random: seededRandom(await seedKey(input.seed)),
    stdin: input.stdin ?? new Uint8Array(0),
    stdout: (data) => {
      if (!stdout.push(data)) throw new OutputLimitExceeded();
    },
    stderr: (data) => void stderr.push(data),
    files,
    // Scratch files live in this thread's memory too, so they share the task's memory limit
    // with its linear memory as it is when they grow.
    reserve: (bytes) => {
      if (bytes > 0 && scratchBytes + bytes + (memory?.buffer.byteLength ?? 0) > limitBytes) {
        scratchRefused = true;
        return false;
      }
      scratchBytes += bytes;
      return true;
    },
  });

  let exitCode = -1;
  let error: SandboxError | undefined;
  try {
    const instance = await WebAssembly.instantiate(module, {
      wasi_snapshot_preview1: host.imports,
      ...(pacer ? { [PACE_IMPORT.module]: { [PACE_IMPORT.name]: pacer.pace } } : {}),
    });
    const exports = instance.exports as { memory?: unknown; _start?: unknown };
    if (!(exports.memory instanceof WebAssembly.Memory) || typeof exports._start !== "function") {
      return failure("invalid-module", "the module must export `memory` and a `_start` function", started);
    }
    memory = exports.memory;
    exitCode = host.start(instance);
  } catch (e) {
    if (e instanceof OutputLimitExceeded) {
      error = { code: "output-limit", message: `the task wrote more than ${limits.outputBytes} bytes to stdout` };
    } else if (e instanceof TaskSignal) {
      error = { code: "trap", message: e.message };
    } else {
      error = { code: "trap", message: errorText(e) };
    }
  }

  // memory.grow past the cap returns -1 inside the module, which then aborts or traps in its
  // own way; a failed run whose memory ended near the cap is reported as out of memory.
  const pages = memory ? memory.buffer.byteLength / PAGE_BYTES : 0;
  const nearCap = pages >= limits.memoryPages - Math.max(1, Math.floor(limits.memoryPages / 8));
  if (memory && pages > limits.memoryPages) {
    error = { code: "memory-limit", message: `the task used ${pages} memory pages, above the limit of ${limits.memoryPages}` };
  } else if (memory && nearCap && (exitCode !== 0 || error?.code === "trap")) {
    error = { code: "memory-limit", message: `the task failed after growing its memory to ${pages} of ${limits.memoryPages} pages` };
  } else if (scratchRefused && (exitCode !== 0 || error?.code === "trap")) {
    error = {
      code: "memory-limit",
      message: `the task failed after its files (${scratchBytes} bytes) and memory (${pages} pages) filled its limit of ${limits.memoryPages} pages`,
    };
  }
  if (error) exitCode = -1;

  const out = stdout.bytes();
  return {
    exitCode,
    stdout: out,
    stderr: stderr.bytes(),
    outputHash: await sha256Hex(out),
    elapsedMs: performance.now() - started,
    ...(pacer ? { restedMs: pacer.restedMs() } : {}),
    ...(error ? { error } : {}),
  };
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
