// Runs browser-worker.ts inside a Node worker thread behind a Web Worker-like global scope,
// so the browser pool and its worker entry can be tested without a browser.
import { parentPort } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
globalThis.postMessage = (message) => parentPort.postMessage(message);
globalThis.addEventListener = (type, listener) => {
  if (type === "message") parentPort.on("message", (data) => listener({ data }));
};
await import("../browser-worker.ts");
