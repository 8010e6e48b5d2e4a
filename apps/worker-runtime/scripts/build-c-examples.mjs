// Compiles the C examples (examples/c/*.c) to WASI preview 1 modules beside their sources with
// clang and wasi-libc. The built modules are committed, so tests and users need only Node; run
// this (`npm run build:c-examples -w @cyclemarket/worker-runtime`) after changing a program.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findClang } from "./clang.mjs";

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "examples", "c");
const clang = findClang("build-c-examples");

const programs = readdirSync(dir).filter((f) => f.endsWith(".c")).sort();
for (const file of programs) {
  // -Wl,--strip-all keeps the committed binaries small and free of build paths.
  execFileSync(clang, ["--target=wasm32-wasi", "-O2", "-Wall", "-Wextra", "-Wl,--strip-all", "-o", join(dir, file.replace(/\.c$/, ".wasm")), join(dir, file)], { stdio: "inherit" });
}
console.log(`build-c-examples: ${programs.length} programs built (${dir})`);
