import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { createBrowserPool, type WorkerLike } from "./browser.ts";
import { sha256Hex } from "./sandbox.ts";
import { LOOP_WAT, exampleBytes, wat } from "./testing/fixtures.ts";

// A Web Worker stand-in over a Node worker thread running the real browser-worker.ts entry.
function nodeWebWorker(): WorkerLike {
  const thread = new Worker(new URL("./testing/web-worker-scope.mjs", import.meta.url));
  const like: WorkerLike = {
    onmessage: null,
    onerror: null,
    onmessageerror: null,
    postMessage: (m) => thread.postMessage(m),
    terminate: () => void thread.terminate(),
  };
  thread.on("message", (data: unknown) => like.onmessage?.({ data } as MessageEvent));
  thread.on("error", (e) => like.onerror?.({ message: e.message, preventDefault() {} } as ErrorEvent));
  return like;
}

const pool = createBrowserPool({ slots: 2, createWorker: nodeWebWorker });
afterAll(() => pool.close());
const limits = { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 };

// Each stand-in thread starts a TypeScript loader (a real Web Worker loads a bundle): slow on a busy machine.
describe("browser pool", { timeout: 30_000 }, () => {
  it("runs a task in the Web Worker entry and gets the same hash as another run", async () => {
    const module = exampleBytes("montecarlo");
    const moduleHash = await sha256Hex(module);
    const [a, b] = await Promise.all([0, 1].map(() => pool.run({ moduleHash, module, args: ["50000"], seed: "job/3", limits })));
    expect(a!.error).toBeUndefined();
    expect(new TextDecoder().decode(a!.stdout)).toMatch(/^\d+ 50000\n$/);
    expect(a!.outputHash).toBe(b!.outputHash);
  });

  it("terminates a worker whose task runs past its wall time", async () => {
    const loop = wat(LOOP_WAT);
    const r = await pool.run({ moduleHash: await sha256Hex(loop), module: loop, args: [], seed: "s", limits: { ...limits, wallMs: 200 } });
    expect(r.error?.code).toBe("timeout");
  });

  it("benchmarks inside a worker", async () => {
    expect((await pool.benchmark(100)).speed).toBeGreaterThan(0);
  });
});
