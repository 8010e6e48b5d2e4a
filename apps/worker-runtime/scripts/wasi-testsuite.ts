// npx tsx apps/worker-runtime/scripts/wasi-testsuite.ts SUITE_DIR [NAME_FILTER]
//
// Runs the official WASI test suite's preview-1 programs under the sandbox (runTask), as the
// suite's own runner runs them on a host: each test's directory is the task's input files under
// "/" (what a test writes beside them is scratch), and its args, environment, exit code and
// stdout (a prefix) are the suite's. SUITE_DIR is a checkout of the suite's prebuilt binaries
// (its `tests` folder, holding `<language>/testsuite/wasm32-wasip1/*.wasm`); the suite is not
// kept in this repository. Prints each failure and "N/M pass"; exits 1 when any fails.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { runTask } from "../src/sandbox.ts";

const [suite, filter] = process.argv.slice(2);
if (!suite || !existsSync(suite)) {
  console.error("usage: wasi-testsuite.ts SUITE_DIR [NAME_FILTER] (SUITE_DIR: the suite's tests folder)");
  process.exit(2);
}

interface Spec {
  args?: string[];
  env?: Record<string, string>;
  root?: string;
  exit_code?: number;
  stdout?: string;
}

function inputs(dir: string, base: string, out: Record<string, Uint8Array>) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name.endsWith(".cleanup")) continue;
    if (statSync(path).isDirectory()) inputs(path, base, out);
    else out[relative(base, path)] = new Uint8Array(readFileSync(path));
  }
}

const programs: string[] = [];
for (const language of readdirSync(suite).sort()) {
  const dir = join(suite, language, "testsuite", "wasm32-wasip1");
  if (existsSync(dir)) for (const f of readdirSync(dir).sort()) if (f.endsWith(".wasm")) programs.push(join(dir, f));
}
if (programs.length === 0) {
  console.error(`wasi-testsuite: no <language>/testsuite/wasm32-wasip1/*.wasm under ${suite}`);
  process.exit(2);
}

const text = new TextDecoder();
let passed = 0;
let failed = 0;
for (const wasm of programs) {
  const name = relative(suite, wasm).replace("/testsuite/wasm32-wasip1/", "/").replace(/\.wasm$/, "");
  if (filter && !name.includes(filter)) continue;
  const specPath = wasm.replace(/\.wasm$/, ".json");
  const spec: Spec = existsSync(specPath) ? JSON.parse(readFileSync(specPath, "utf8")) : {};
  const files: Record<string, Uint8Array> = {};
  if (spec.root) inputs(join(wasm, "..", spec.root), join(wasm, "..", spec.root), files);
  const out = await runTask({
    module: new Uint8Array(readFileSync(wasm)),
    args: spec.args ?? [],
    env: spec.env ?? {},
    files,
    seed: name,
    limits: { memoryPages: 8192, outputBytes: 1 << 20 },
  });
  const exit = spec.exit_code ?? 0;
  const stdout = text.decode(out.stdout);
  if (!out.error && out.exitCode === exit && stdout.startsWith(spec.stdout ?? "")) {
    passed++;
    continue;
  }
  failed++;
  console.log(`FAIL ${name}: exit ${out.exitCode} (the suite wants ${exit})${out.error ? `, ${out.error.code}: ${out.error.message}` : ""}`);
  const stderr = text.decode(out.stderr).trim();
  if (stderr) console.log(`  stderr: ${stderr.split("\n").slice(0, 6).join("\n          ")}`);
}
console.log(`${passed}/${passed + failed} pass`);
process.exit(failed ? 1 : 0);
