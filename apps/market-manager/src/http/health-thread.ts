import { Worker } from "node:worker_threads";

// `/healthz` on a listener of its own thread (MARKET_HEALTH_PORT). The market's `/healthz` is
// answered by the market's thread, after every call that arrived before it: under a full load
// (bench:load's closed load, the cores busy) it can take far longer than a probe's timeout, so a load balancer
// checking it with a short timeout would take a busy but healthy market out of rotation, its
// machines' calls moving to managers as busy. This thread answers at once whatever the market's
// thread is doing, and still answers for it: the market's thread marks a shared clock every
// TICK_MS, and the answer says how long ago it last did; past the stall bound it is 503.

/** How often the market's thread marks that it runs. */
const TICK_MS = 100;

// Slots of the shared memory: the market thread's last mark (ms since the epoch) and its machines.
const AT = 0;
const MACHINES = 1;

/** The thread: plain JavaScript, so it starts without the sources' loader. */
const THREAD = `
const http = require("node:http");
const { parentPort, workerData } = require("node:worker_threads");
const { shared, port, host, stallMs } = workerData;
const view = new BigInt64Array(shared);
const server = http.createServer((req, res) => {
  const path = (req.url || "/").split("?")[0];
  if ((req.method !== "GET" && req.method !== "HEAD") || path !== "/healthz") {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: "NOT_FOUND", message: "This port answers GET /healthz only; the market's API is on its own port." }));
    return;
  }
  const now = Date.now();
  const lastTurnMsAgo = Math.max(0, now - Number(Atomics.load(view, ${AT})));
  const ok = lastTurnMsAgo <= stallMs;
  const body = { ok, machines: Number(Atomics.load(view, ${MACHINES})), lastTurnMsAgo, at: now };
  if (!ok) body.reason = "The market's thread has not run for " + Math.round(lastTurnMsAgo / 1000) + " s (the bound is " + stallMs / 1000 + " s).";
  res.writeHead(ok ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
});
server.keepAliveTimeout = 65000;
server.on("error", (e) => parentPort.postMessage({ kind: "error", code: e.code, message: e.message }));
server.listen({ port, host }, () => parentPort.postMessage({ kind: "listening", port: server.address().port }));
parentPort.on("message", (m) => {
  if (m === "close") {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
`;

export interface HealthThread {
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts the health listener on `port` (0: any free port) and marks the shared clock from this
 * thread until stopped; `machines` is read at each mark. Rejects with the listener's error (a
 * port in use has `code` EADDRINUSE).
 */
export async function startHealthThread(options: { port: number; host: string; stallMs: number; machines: () => number; onError: (e: Error) => void }): Promise<HealthThread> {
  const shared = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT);
  const view = new BigInt64Array(shared);
  const mark = () => {
    Atomics.store(view, AT, BigInt(Date.now()));
    Atomics.store(view, MACHINES, BigInt(options.machines()));
  };
  mark();
  const ticks = setInterval(mark, TICK_MS);
  ticks.unref();
  const worker = new Worker(THREAD, { eval: true, workerData: { shared, port: options.port, host: options.host, stallMs: options.stallMs } });
  worker.unref();
  // Once it listens, a failure of the thread is the operators' to hear of: the market goes on.
  worker.on("error", (e) => options.onError(e));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the health thread exited (${code})`)));
      worker.on("message", (m: { kind: string; port?: number; code?: string; message?: string }) => {
        if (m.kind === "listening") resolve(m.port!);
        else if (m.kind === "error") reject(Object.assign(new Error(m.message), { code: m.code }));
      });
    });
    return {
      port,
      async stop() {
        clearInterval(ticks);
        const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
        worker.postMessage("close");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
        await worker.terminate();
      },
    };
  } catch (e) {
    clearInterval(ticks);
    await worker.terminate();
    throw e;
  }
}
