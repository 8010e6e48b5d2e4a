// Runs a WASI command under Node's own WASI host, the reference the sandbox is compared with.
// Started as a child process so that its stdin, stdout and stderr are real pipes, as they are
// for the sandbox's tasks:  node reference-host.mjs <module.wasm> <root dir> <env json> [args...]
import { readFileSync } from "node:fs";
import { WASI } from "node:wasi";

const [modulePath, rootDir, envJson, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: "preview1", args: ["task.wasm", ...args], env: JSON.parse(envJson), preopens: { "/": rootDir } });
const module = await WebAssembly.compile(readFileSync(modulePath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
