// Messages between a host (the page, or the Node pool) and the thread that runs the sandbox
// (a Web Worker, or a worker thread): one catalog per direction, each message carrying the
// catalog version so a page and a cached worker script of different releases notice.
// zod's small build: a sandbox thread loads these schemas at start, and the full build would add
// tens of milliseconds to every thread start (README, "Fast thread start").
import * as z from "zod/mini";
import type { SandboxErrorCode } from "./sandbox.ts";

export const MESSAGE_VERSION = 1;
const version = z.literal(MESSAGE_VERSION);

// Any Uint8Array, whatever buffer backs it (z.instanceof would narrow to ArrayBuffer-backed ones).
const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, "expected a Uint8Array");

export const ThreadTaskLimits = z.object({
  memoryPages: z.int().check(z.positive()),
  outputBytes: z.int().check(z.nonnegative()),
});
export type ThreadTaskLimits = z.infer<typeof ThreadTaskLimits>;

/** Host -> thread: run one task. The module is compiled by the host, once per hash and memory limit. */
export const RunMessage = z.object({
  version,
  type: z.literal("run"),
  runId: z.string(),
  module: z.instanceof(WebAssembly.Module),
  args: z.array(z.string()),
  stdin: bytes,
  files: z.optional(z.record(z.string(), bytes)),
  env: z.optional(z.record(z.string(), z.string())),
  seed: z.string(),
  limits: ThreadTaskLimits,
  /** The slot's shared pacing cells, sent with a module compiled paced (controls/pacer.ts). */
  pacing: z.optional(z.custom<Int32Array>((v) => v instanceof Int32Array && typeof SharedArrayBuffer === "function" && v.buffer instanceof SharedArrayBuffer, "expected shared pacing cells")),
});
export type RunMessage = z.infer<typeof RunMessage>;

/** Host -> thread: time the benchmark kernel on this thread. */
export const BenchmarkMessage = z.object({
  version,
  type: z.literal("benchmark"),
  runId: z.string(),
  durationMs: z.number().check(z.positive()),
});
export type BenchmarkMessage = z.infer<typeof BenchmarkMessage>;

export const HostToThread = z.discriminatedUnion("type", [RunMessage, BenchmarkMessage]);
export type HostToThread = z.infer<typeof HostToThread>;

const SANDBOX_ERROR_CODES = ["trap", "output-limit", "memory-limit", "invalid-module", "timeout", "crashed", "aborted"] as const satisfies readonly SandboxErrorCode[];

export const ThreadTaskOutcome = z.object({
  exitCode: z.int(),
  stdout: bytes,
  stderr: bytes,
  outputHash: z.string(),
  elapsedMs: z.number(),
  restedMs: z.optional(z.number()),
  error: z.optional(z.object({ code: z.enum(SANDBOX_ERROR_CODES), message: z.string() })),
});

/** Thread -> host: the thread has loaded and takes work. */
export const ReadyMessage = z.object({ version, type: z.literal("ready") });
export type ReadyMessage = z.infer<typeof ReadyMessage>;

/** Thread -> host: a task finished (successfully or not: see outcome.error). */
export const ResultMessage = z.object({ version, type: z.literal("result"), runId: z.string(), outcome: ThreadTaskOutcome });
export type ResultMessage = z.infer<typeof ResultMessage>;

export const BenchmarkResultMessage = z.object({
  version,
  type: z.literal("benchmark-result"),
  runId: z.string(),
  result: z.object({ speed: z.number(), rate: z.number(), iterations: z.number(), elapsedMs: z.number() }),
});
export type BenchmarkResultMessage = z.infer<typeof BenchmarkResultMessage>;

/** Thread -> host: the thread could not handle a message (bad message, or an unexpected error). */
export const FailedMessage = z.object({ version, type: z.literal("failed"), runId: z.nullable(z.string()), message: z.string() });
export type FailedMessage = z.infer<typeof FailedMessage>;

export const ThreadToHost = z.discriminatedUnion("type", [ReadyMessage, ResultMessage, BenchmarkResultMessage, FailedMessage]);
export type ThreadToHost = z.infer<typeof ThreadToHost>;
