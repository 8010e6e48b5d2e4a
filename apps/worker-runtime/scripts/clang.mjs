// The clang the C build scripts use (CLANG overrides), checked once so a machine without it
// gets the packages to install instead of a spawn error.
import { execFileSync } from "node:child_process";

export function findClang(script) {
  const clang = process.env.CLANG ?? "clang";
  try {
    execFileSync(clang, ["--version"], { stdio: "ignore" });
  } catch {
    console.error(`${script}: ${clang} was not found; install clang, lld, wasi-libc and the wasm32 compiler runtime (see wasi-tests/README.md)`);
    process.exit(1);
  }
  return clang;
}
