// The Node worker as an npm package tarball, dist/cyclemarket-worker.tgz, which the Market Manager
// serves at /downloads/cyclemarket-worker.tgz: `npx --yes URL/cyclemarket-worker.tgz --url URL
// --token TOKEN` on any machine with Node 20. The package holds the two bundles of
// scripts/build-thread.mjs (the CLI and the sandbox thread, every npm package they use inlined),
// a bin and a README, and depends on nothing, so installing it asks no registry for anything.
// Runs from the root postinstall and `npm start`; skipped when the tarball is newer than its parts.
import { readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildThread, CLI_BUNDLE, THREAD_BUNDLE } from "./build-thread.mjs";
import { writeTarball } from "../../../scripts/npm-tarball.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
export const WORKER_TARBALL = join(pkg, "dist", "cyclemarket-worker.tgz");
const TARBALL_SCRIPT = join(pkg, "..", "..", "scripts", "npm-tarball.mjs");

const README = `# cyclemarket-worker

Sells this machine's idle cycles to a Cycle Market: it benchmarks the machine, joins the market,
and runs the tasks it is leased in a WebAssembly sandbox (WASI preview 1), one per slot, until
Ctrl-C, when it departs and its unfinished tasks go back to the market.

    npx --yes URL/downloads/cyclemarket-worker.tgz --url URL --token TOKEN

URL is the market's address; TOKEN an API token with the produce scope, made on the market's
Account page. \`--help\` lists every option (slots, price, CPU limit, schedule, ...). Node 20 or
later; nothing else is installed.
`;

const mtime = (path) => stat(path).then((s) => s.mtimeMs, () => -1);

/** Builds the tarball unless it is newer than the bundles and this script; true when it built. */
export async function packWorker({ force = false } = {}) {
  await buildThread();
  const parts = await Promise.all([CLI_BUNDLE, THREAD_BUNDLE, fileURLToPath(import.meta.url), TARBALL_SCRIPT, join(pkg, "package.json")].map(mtime));
  if (!force && (await mtime(WORKER_TARBALL)) > Math.max(...parts)) return false;
  const [cli, thread] = await Promise.all([readFile(CLI_BUNDLE), readFile(THREAD_BUNDLE)]);
  // Everything is inlined: an import of a package here would fail on the user's machine.
  for (const [name, code] of [["the CLI", cli], ["the sandbox thread", thread]]) {
    const bare = /(?:^|[\s;}])(?:import|export)[^"';]*?from\s*["']([^"'.][^"']*)["']/gm;
    for (const m of code.toString("utf8").matchAll(bare)) {
      if (!m[1].startsWith("node:")) throw new Error(`${name} bundle imports the package ${m[1]}; the worker's tarball must carry it`);
    }
  }
  const { version } = JSON.parse(await readFile(join(pkg, "package.json"), "utf8"));
  const manifest = {
    name: "cyclemarket-worker",
    version,
    description: "Sells this machine's idle cycles to a Cycle Market: a Node worker running WebAssembly tasks in a sandbox.",
    type: "module",
    bin: { "cyclemarket-worker": "bin/worker.mjs" },
    engines: { node: ">=20" },
  };
  await writeTarball(WORKER_TARBALL, [
    { path: "package.json", data: JSON.stringify(manifest, null, 2) + "\n" },
    { path: "README.md", data: README },
    { path: "bin/worker.mjs", data: '#!/usr/bin/env node\nimport "../dist/cli/worker.mjs";\n', mode: 0o755 },
    // Where the CLI looks for its thread: dist/pool-thread.mjs, two levels above the CLI's own file.
    { path: "dist/cli/worker.mjs", data: cli },
    { path: "dist/pool-thread.mjs", data: thread },
  ]);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = await packWorker({ force: process.argv.includes("--force") });
  console.log(`cyclemarket-worker: ${built ? "packed" : "up to date"} (${WORKER_TARBALL})`);
}
