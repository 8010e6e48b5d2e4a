// What the producer loop needs from whatever runs tasks: a Node thread pool or a set of
// browser Web Workers. Both enforce the wall-time limit by terminating the thread.
import type { BenchmarkResult } from "./benchmark.ts";
import type { TaskOutcome } from "./sandbox.ts";

export interface ExecutorLimits {
  wallMs: number;
  memoryPages: number;
  outputBytes: number;
}

export interface ExecuteRequest {
  /** SHA-256 hex of `module`; compiled modules are cached under it. */
  moduleHash: string;
  module: Uint8Array;
  args: string[];
  stdin?: Uint8Array;
  files?: Record<string, Uint8Array>;
  env?: Record<string, string>;
  /** The task id. */
  seed: string;
  limits: ExecutorLimits;
}

export interface Executor {
  /** How many tasks run at once. */
  readonly slots: number;
  /**
   * Resolves with the outcome, also when the task failed, timed out or was aborted (see
   * outcome.error). A task that finds every slot busy waits for one; `onStart` is called when it
   * gets its slot.
   */
  run(request: ExecuteRequest, signal?: AbortSignal, onStart?: () => void): Promise<TaskOutcome>;
  /** Times the benchmark kernel on one of the executor's threads. */
  benchmark(durationMs?: number): Promise<BenchmarkResult>;
  /**
   * The producer's CPU limit in percent: where the executor can, tasks keep it inside their run
   * (their outcome then says how long they rested); elsewhere the producer rests slots between tasks.
   */
  setCpuLimit?(percent: number): void;
  /** Stops every thread; running tasks end as "aborted". */
  close(): Promise<void>;
}
