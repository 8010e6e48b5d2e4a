// The Node executor: a pool of worker threads, one per slot, each running the sandbox from the
// prebuilt bundle dist/pool-thread.mjs (scripts/build-thread.mjs, run by the root postinstall),
// so a thread is ready in milliseconds and no TypeScript loader runs inside it.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ThreadPool } from "../thread-pool.ts";

export interface NodePoolOptions {
  slots: number;
  /** Heap limit of each thread in MiB; the module's own memory is capped separately. Default 512. */
  threadHeapMb?: number;
  /** Keep one loaded thread in reserve for a slot whose thread is stopped or dies. Default true. */
  spareThread?: boolean;
  /** Keep a CPU limit inside each task (wasm-pace.ts) rather than by resting between tasks. Default true. */
  pacing?: boolean;
}

export const THREAD_ENTRY = new URL("../../dist/pool-thread.mjs", import.meta.url);

/**
 * One sandbox thread. It gets no exec arguments of its own: it would otherwise inherit the
 * parent's, and a parent started through a TypeScript loader would make every thread load that
 * loader too (hundreds of milliseconds per start, for a bundle that is plain JavaScript).
 */
export function startSandboxThread(threadHeapMb = 512): Worker {
  if (!existsSync(THREAD_ENTRY)) {
    throw new Error(
      `the sandbox thread is not built (${fileURLToPath(THREAD_ENTRY)}); run \`npm run build:thread -w @cyclemarket/worker-runtime\` (npm ci does it)`,
    );
  }
  return new Worker(THREAD_ENTRY, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: threadHeapMb } });
}

export function createNodePool(options: NodePoolOptions): ThreadPool {
  return new ThreadPool(options.slots, (events) => {
    const worker = startSandboxThread(options.threadHeapMb);
    worker.on("message", (raw: unknown) => events.message(raw));
    worker.on("error", (error) => events.error(error));
    worker.on("exit", (code) => events.error(new Error(`thread exited with code ${code}`)));
    return {
      post: (message) => worker.postMessage(message),
      terminate: () => void worker.terminate(),
    };
  }, { spareThread: options.spareThread, pacing: options.pacing }).warm();
}
