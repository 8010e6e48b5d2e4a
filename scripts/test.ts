// `npm test`: the type check of every workspace (counted as one test), every test — unit,
// integration, fault and security tests (vitest, real PostgreSQL) — then the end-to-end tests in
// Chromium (Playwright). Ends with one line: "N passed, M failed".
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { root } from "./stack.ts";

const tmp = join(root, ".tmp");
mkdirSync(tmp, { recursive: true });
const vitestJson = join(tmp, "vitest-results.json");
const playwrightJson = join(tmp, "playwright-results.json");

// The compiler is the first test: a type error anywhere (web app included) fails the run.
const typecheck = spawnSync("npm", ["run", "-s", "typecheck"], { cwd: root, stdio: "inherit" });
console.log(typecheck.status === 0 ? "typecheck: every workspace checks" : "typecheck: FAILED (see above)");

const vitest = spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestJson}`], {
  cwd: root,
  stdio: "inherit",
});
// playwright.config.ts writes its JSON report to .tmp/playwright-results.json.
const playwright = spawnSync("npx", ["playwright", "test"], { cwd: root, stdio: "inherit" });

let passed = typecheck.status === 0 ? 1 : 0;
let failed = typecheck.status === 0 ? 0 : 1;
if (existsSync(vitestJson)) {
  const v = JSON.parse(readFileSync(vitestJson, "utf8"));
  passed += v.numPassedTests ?? 0;
  // A file that fails to load has no failed tests of its own; count it once.
  failed += Math.max(v.numFailedTests ?? 0, v.numFailedTestSuites ?? 0);
}
if (existsSync(playwrightJson)) {
  const p = JSON.parse(readFileSync(playwrightJson, "utf8"));
  passed += p.stats?.expected ?? 0;
  failed += (p.stats?.unexpected ?? 0) + (p.stats?.flaky ?? 0);
}
const ok = typecheck.status === 0 && vitest.status === 0 && playwright.status === 0;
if (!ok && failed === 0) failed = 1; // a run that broke before counting is still a failure
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);
