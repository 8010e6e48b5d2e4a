// Compiles the WASI conformance programs (wasi-tests/src/*.c) to WASI preview 1 modules in
// wasi-tests/build with clang and wasi-libc. The built modules are committed, so the tests run
// on a machine with only Node; run this (`npm run build:wasi-tests`) after changing a program.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findClang } from "./clang.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "wasi-tests");
const srcDir = join(root, "src");
const outDir = join(root, "build");
const clang = findClang("build-wasi-tests");

mkdirSync(outDir, { recursive: true });
const programs = readdirSync(srcDir).filter((f) => f.endsWith(".c")).sort();
for (const file of programs) {
  const out = join(outDir, file.replace(/\.c$/, ".wasm"));
  // -O2 as users compile; -Wl,--strip-all keeps the committed binaries small and free of paths.
  execFileSync(clang, ["--target=wasm32-wasi", "-O2", "-Wall", "-Wno-unused-result", "-Wl,--strip-all", "-o", out, join(srcDir, file)], { stdio: "inherit" });
}
console.log(`build-wasi-tests: ${programs.length} programs built (${outDir})`);
