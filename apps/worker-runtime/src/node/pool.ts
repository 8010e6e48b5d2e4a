// The Node executor: a pool of worker threads, one per slot, each running the sandbox.
import { Worker } from "node:worker_threads";
import { ThreadPool } from "../thread-pool.ts";

export interface NodePoolOptions {
  slots: number;
  /** Heap limit of each thread in MiB; the module's own memory is capped separately. Default 512. */
  threadHeapMb?: number;
}

export function createNodePool(options: NodePoolOptions): ThreadPool {
  const entry = new URL("./pool-thread.mjs", import.meta.url);
  return new ThreadPool(options.slots, (events) => {
    const worker = new Worker(entry, {
      resourceLimits: { maxOldGenerationSizeMb: options.threadHeapMb ?? 512 },
    });
    worker.on("message", (raw: unknown) => events.message(raw));
    worker.on("error", (error) => events.error(error));
    worker.on("exit", (code) => events.error(new Error(`thread exited with code ${code}`)));
    return {
      post: (message) => worker.postMessage(message),
      terminate: () => void worker.terminate(),
    };
  });
}
