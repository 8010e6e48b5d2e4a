// The browser side of the worker runtime, for the /produce page: a pool of Web Workers (one
// per chosen core) running the sandbox, the benchmark, and the shared producer loop.
import { ThreadPool } from "./thread-pool.ts";

/** What the pool needs of a Web Worker; a real `Worker` fits. */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  onmessageerror: ((event: MessageEvent) => void) | null;
}

export interface BrowserPoolOptions {
  /** Web Workers to run at once; default: all cores but one (see defaultSlots). */
  slots?: number;
  /** Starts one sandbox worker. The default loads browser-worker.ts through the bundler. */
  createWorker?: () => WorkerLike;
}

/** All logical cores but one, so the page itself stays responsive; at least one. */
export function defaultSlots(): number {
  const cores = typeof navigator !== "undefined" ? navigator.hardwareConcurrency || 2 : 2;
  return Math.max(1, cores - 1);
}

/** The `new Worker(new URL(...), ...)` form, written out so webpack and Turbopack bundle the worker. */
export function createSandboxWorker(): WorkerLike {
  return new Worker(new URL("./browser-worker.ts", import.meta.url), { type: "module", name: "cyclemarket-sandbox" });
}

/**
 * A pool of sandbox Web Workers, all started at once. `run` enforces each task's wall time by
 * terminating its worker (a replacement starts at once); `benchmark` times the kernel inside a
 * worker so the page does not freeze; `close` terminates every worker (call it when the page
 * leaves).
 */
export function createBrowserPool(options: BrowserPoolOptions = {}): ThreadPool {
  const createWorker = options.createWorker ?? createSandboxWorker;
  return new ThreadPool(options.slots ?? defaultSlots(), (events) => {
    const worker = createWorker();
    worker.onmessage = (event) => events.message(event.data);
    worker.onerror = (event) => {
      event.preventDefault?.();
      events.error(new Error(event.message || "the sandbox worker failed to load"));
    };
    worker.onmessageerror = () => events.error(new Error("a message from the sandbox worker could not be read"));
    return {
      post: (message) => worker.postMessage(message),
      terminate: () => worker.terminate(),
    };
  }).warm(); // every slot's worker loads now, while the page benchmarks and registers
}

export { runProducer } from "./producer.ts";
export type { ProducerEvent, ProducerOptions, ProducerSummary, MachineProfile, ProducerStage } from "./producer.ts";
export { runBenchmark } from "./benchmark.ts";
export type { Executor } from "./executor.ts";
export type { WorkerApi, WorkStreamHandlers } from "./api.ts";
export { workStreamCallbacks } from "./work-stream.ts";
export { ThreadPool } from "./thread-pool.ts";
export { MachineControls, MachineControlsPatch, DEFAULT_CONTROLS, offReason } from "./controls/machine-controls.ts";
export type { LocalConditions, OffReason, MachineControlsPatch as MachineControlsChange } from "./controls/machine-controls.ts";
export type { OwnerActivity } from "./controls/local-conditions.ts";
export { parseSchedule, inSchedule, minutesToNextChange } from "./controls/schedule.ts";
