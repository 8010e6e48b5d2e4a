// A Node worker thread that runs sandbox tasks for src/node/pool.ts.
import { parentPort } from "node:worker_threads";
import { serveThread } from "../thread-handler.ts";

const port = parentPort;
if (!port) throw new Error("pool-thread runs only inside a worker thread");
void serveThread((onMessage) => port.on("message", onMessage), (message) => port.postMessage(message));
