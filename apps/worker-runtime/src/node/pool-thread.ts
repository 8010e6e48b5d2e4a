// A Node worker thread that runs sandbox tasks for src/node/pool.ts.
import { parentPort } from "node:worker_threads";
import { MESSAGE_VERSION, type ThreadToHost } from "../messages.ts";
import { handleHostMessage } from "../thread-handler.ts";

const port = parentPort;
if (!port) throw new Error("pool-thread runs only inside a worker thread");
const post = (message: ThreadToHost) => port.postMessage(message);
port.on("message", (raw: unknown) => void handleHostMessage(raw, post));
post({ version: MESSAGE_VERSION, type: "ready" });
