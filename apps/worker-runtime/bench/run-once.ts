// One timed run of a module for bench/sandbox.ts, in a process of its own: Node's WASI host
// crashes (segmentation fault) when a process starts it many times, so every round of the
// comparison gets a fresh process, for the sandbox as for the reference. The time covers
// compiling, instantiating and running; it is printed in milliseconds.
//   tsx bench/run-once.ts <sandbox|reference> <module.wasm> [args...]
import { openSync, readFileSync } from "node:fs";
import { WASI } from "node:wasi";
import { compileTaskModule, runTask } from "../src/sandbox.ts";

const [host, path, ...args] = process.argv.slice(2);
const bytes = readFileSync(path!);
const MEMORY_PAGES = 4096;
const started = performance.now();
let stdout: string;
if (host === "reference") {
  const module = await WebAssembly.compile(bytes);
  const wasi = new WASI({ version: "preview1", args: ["task.wasm", ...args], env: {}, stdin: openSync("/dev/null", "r"), stdout: openSync("/dev/null", "w"), returnOnExit: true });
  wasi.start(await WebAssembly.instantiate(module, wasi.getImportObject() as WebAssembly.Imports));
  stdout = "";
} else {
  const module = await compileTaskModule(bytes, MEMORY_PAGES);
  const r = await runTask({ module, args, seed: "bench", limits: { memoryPages: MEMORY_PAGES, outputBytes: 1 << 16 } });
  if (r.error) throw new Error(`the module failed in the sandbox: ${r.error.message}`);
  stdout = new TextDecoder().decode(r.stdout).trim();
}
console.log(JSON.stringify({ ms: performance.now() - started, stdout }));
