// Entry of a browser Web Worker that runs sandbox tasks for the /produce page. Bundled by
// Next.js from `new Worker(new URL("./browser-worker.ts", import.meta.url), { type: "module" })`
// in browser.ts. It answers the HostToThread catalog (messages.ts) and announces itself once loaded
// and warmed up.
import type { ThreadToHost } from "./messages.ts";
import { serveThread } from "./thread-handler.ts";

// The worker's global scope, typed here rather than through the WebWorker lib, which
// conflicts with the DOM lib the rest of the package is checked against.
interface WorkerScope {
  postMessage(message: ThreadToHost): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
void serveThread((onMessage) => scope.addEventListener("message", (event) => onMessage(event.data)), (m) => scope.postMessage(m));
