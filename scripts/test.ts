// `npm test`: the type check of every workspace (counted as one test), every test — unit,
// integration, fault and security tests (vitest, real PostgreSQL) — and the end-to-end tests in
// Chromium (Playwright). Prints the slowest files and how long the run took, and ends with one
// line: "N passed, M failed".
//
// The vitest files and the end-to-end tests run at the same time: most of either's time is spent
// waiting on markets, workers and timers, and run one after the other they left the cores idle
// for much of the run. The files that measure time under load (vitest.config.ts ALONE) run
// after both, so nothing else takes the cores they measure.
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildDownloadsIfStale, buildWebIfStale, root } from "./stack.ts";
import { fileTimesPath, type FileTime } from "../test/support/file-times.ts";

const tmp = join(root, ".tmp");
mkdirSync(tmp, { recursive: true });
const vitestJson = join(tmp, "vitest-results.json");
const aloneJson = join(tmp, "vitest-alone-results.json");
const playwrightJson = join(tmp, "playwright-results.json");
const playwrightLog = join(tmp, "playwright-output.log");
// A phase that breaks before reporting must not leave an earlier run's figures to be read.
for (const file of [vitestJson, aloneJson, playwrightJson, playwrightLog, fileTimesPath]) rmSync(file, { force: true });

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

// The web app and the downloads (the worker's and the client's packages) are built once, here,
// before test files that serve them run side by side and would each build them. (Not beside the
// type check, which reads the types the web build writes.)
const webBuilt = await timed("web build", () =>
  buildWebIfStale(console.log)
    .then(buildDownloadsIfStale)
    .then(
      () => true,
      (e: unknown) => (console.log(`web build: FAILED (${e instanceof Error ? e.message : String(e)})`), false),
    ),
);

const vitestRun = (projects: string, json: string) =>
  run("npx", ["vitest", "run", "--project", projects, "--reporter=default", "--reporter=json", `--outputFile.json=${json}`, "--reporter=./test/support/file-times.ts"]);
// The end-to-end run's lines go to a file as they come and are printed once vitest is done, so the
// two reports do not interleave. playwright.config.ts writes its JSON report to .tmp/playwright-results.json.
const [vitest, playwright] = await Promise.all([
  timed("vitest", () => vitestRun("!*-alone", vitestJson)),
  timed("end-to-end", () => run("npx", ["playwright", "test"], playwrightLog)),
]);
const files: FileTime[] = [];
// Each vitest run writes its file times to the same place: read them before the next.
const readFileTimes = () => existsSync(fileTimesPath) && files.push(...(JSON.parse(readFileSync(fileTimesPath, "utf8")) as FileTime[]));
readFileTimes();
console.log(`\nend-to-end tests (run beside the vitest files above):\n${existsSync(playwrightLog) ? readFileSync(playwrightLog, "utf8") : "(no output)"}`);
const alone = await timed("vitest alone", () => vitestRun("*-alone", aloneJson));
readFileTimes();

let passed = typecheck.status === 0 ? 1 : 0;
let failed = (typecheck.status === 0 ? 0 : 1) + (webBuilt ? 0 : 1);
for (const json of [vitestJson, aloneJson]) {
  if (!existsSync(json)) continue;
  const v = JSON.parse(readFileSync(json, "utf8"));
  passed += v.numPassedTests ?? 0;
  // A file that fails to load has no failed tests of its own; count it once.
  const unloaded = ((v.testResults ?? []) as { status: string; assertionResults?: { status: string }[] }[]).filter(
    (f) => f.status === "failed" && !(f.assertionResults ?? []).some((a) => a.status === "failed"),
  ).length;
  failed += (v.numFailedTests ?? 0) + unloaded;
}
if (existsSync(playwrightJson)) {
  const p = JSON.parse(readFileSync(playwrightJson, "utf8"));
  passed += p.stats?.expected ?? 0;
  failed += (p.stats?.unexpected ?? 0) + (p.stats?.flaky ?? 0);
  files.push(...playwrightFileTimes(p));
}
const ok = typecheck.status === 0 && webBuilt && vitest === 0 && alone === 0 && playwright === 0;
if (!ok && failed === 0) failed = 1; // a run that broke before counting is still a failure

console.log("\nslowest files:");
for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`${seconds(f.ms).padStart(8)}  ${f.file} (${f.project})`);
// vitest and end-to-end overlap: the phases add up to more than the run.
const phase = (name: string) => clock(phases.find(([n]) => n === name)?.[1] ?? 0);
console.log(
  `\nnpm test took ${clock(performance.now() - runStarted)} (typecheck ${phase("typecheck")}, web build ${phase("web build")}, ` +
    `vitest ${phase("vitest")} beside end-to-end ${phase("end-to-end")}, vitest alone ${phase("vitest alone")})`,
);
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

/** Runs a command to its end and resolves with its exit status; its output is the terminal's, or goes to `logFile`. */
function run(command: string, args: string[], logFile?: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: logFile ? ["ignore", "pipe", "pipe"] : "inherit" });
    if (logFile) {
      const log = createWriteStream(logFile);
      child.stdout!.pipe(log, { end: false });
      child.stderr!.pipe(log, { end: false });
      child.once("close", (status) => log.end(() => resolve(status)));
    } else child.once("close", resolve);
    child.once("error", (e) => (console.log(`${command}: ${e.message}`), resolve(null)));
  });
}

function seconds(ms: number) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function clock(ms: number) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}
