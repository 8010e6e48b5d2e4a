// `npm test`: the type check of every workspace (counted as one test), every test — unit,
// integration, fault and security tests (vitest, real PostgreSQL) — then the end-to-end tests in
// Chromium (Playwright). Prints the slowest files and how long the run took, and ends with one
// line: "N passed, M failed".
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildWebIfStale, root } from "./stack.ts";
import { fileTimesPath, type FileTime } from "../test/support/file-times.ts";

const tmp = join(root, ".tmp");
mkdirSync(tmp, { recursive: true });
const vitestJson = join(tmp, "vitest-results.json");
const playwrightJson = join(tmp, "playwright-results.json");
// A phase that breaks before reporting must not leave an earlier run's figures to be read.
for (const file of [vitestJson, playwrightJson, fileTimesPath]) rmSync(file, { force: true });

const phases: [string, number][] = [];
async function timed<T>(name: string, run: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    phases.push([name, performance.now() - started]);
  }
}
const runStarted = performance.now();

// The compiler is the first test: a type error anywhere (web app included) fails the run.
const typecheck = await timed("typecheck", () => spawnSync("npm", ["run", "-s", "typecheck"], { cwd: root, stdio: "inherit" }));
console.log(typecheck.status === 0 ? "typecheck: every workspace checks" : "typecheck: FAILED (see above)");

// The web app is built once, here, before test files that serve it run side by side and would
// each build it. (Not beside the type check, which reads the types the build writes.)
const webBuilt = await timed("web build", () =>
  buildWebIfStale(console.log).then(
    () => true,
    (e: unknown) => (console.log(`web build: FAILED (${e instanceof Error ? e.message : String(e)})`), false),
  ),
);

const vitest = await timed("vitest", () =>
  spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestJson}`, "--reporter=./test/support/file-times.ts"], {
    cwd: root,
    stdio: "inherit",
  }),
);
// playwright.config.ts writes its JSON report to .tmp/playwright-results.json.
const playwright = await timed("end-to-end", () => spawnSync("npx", ["playwright", "test"], { cwd: root, stdio: "inherit" }));

let passed = typecheck.status === 0 ? 1 : 0;
let failed = (typecheck.status === 0 ? 0 : 1) + (webBuilt ? 0 : 1);
const files: FileTime[] = [];
if (existsSync(vitestJson)) {
  const v = JSON.parse(readFileSync(vitestJson, "utf8"));
  passed += v.numPassedTests ?? 0;
  // A file that fails to load has no failed tests of its own; count it once.
  failed += Math.max(v.numFailedTests ?? 0, v.numFailedTestSuites ?? 0);
}
if (existsSync(fileTimesPath)) files.push(...(JSON.parse(readFileSync(fileTimesPath, "utf8")) as FileTime[]));
if (existsSync(playwrightJson)) {
  const p = JSON.parse(readFileSync(playwrightJson, "utf8"));
  passed += p.stats?.expected ?? 0;
  failed += (p.stats?.unexpected ?? 0) + (p.stats?.flaky ?? 0);
  files.push(...playwrightFileTimes(p));
}
const ok = typecheck.status === 0 && webBuilt && vitest.status === 0 && playwright.status === 0;
if (!ok && failed === 0) failed = 1; // a run that broke before counting is still a failure

console.log("\nslowest files:");
for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`${seconds(f.ms).padStart(8)}  ${f.file} (${f.project})`);
console.log(`\nnpm test took ${clock(performance.now() - runStarted)} (${phases.map(([name, ms]) => `${name} ${clock(ms)}`).join(", ")})`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);

type PlaywrightSuite = { file?: string; specs?: { tests: { results: { duration: number }[] }[] }[]; suites?: PlaywrightSuite[] };

/** Each spec file's tests, retries included, added up: the end-to-end tests run one at a time. */
function playwrightFileTimes(report: { suites?: PlaywrightSuite[] }): FileTime[] {
  const byFile = new Map<string, number>();
  const visit = (suite: PlaywrightSuite, file: string) => {
    for (const spec of suite.specs ?? []) for (const test of spec.tests) for (const r of test.results) byFile.set(file, (byFile.get(file) ?? 0) + r.duration);
    for (const inner of suite.suites ?? []) visit(inner, file);
  };
  for (const suite of report.suites ?? []) visit(suite, join("test/e2e", suite.file ?? "?"));
  return [...byFile].map(([file, ms]) => ({ file, project: "e2e", ms: Math.round(ms) }));
}

function seconds(ms: number) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function clock(ms: number) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}
