// Runs after `npm ci` / `npm install`: generates the Prisma client, compiles the example
// jobs to WebAssembly, bundles the sandbox thread, builds the client and packs the worker and
// the client as npm tarballs. All work offline.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const run = (cmd, args, env = {}) => execFileSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...env } });

if (existsSync("node_modules/.bin/prisma")) {
  // `prisma generate` needs no schema engine, but the CLI looks for one at start-up and would
  // try to download it; pointing it at any existing file keeps it offline.
  run("node_modules/.bin/prisma", ["generate"], { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: "1" });
}
if (existsSync("apps/worker-runtime/scripts/build-examples.mjs")) {
  run("npm", ["run", "-s", "build:examples", "-w", "@cyclemarket/worker-runtime"]);
}
if (existsSync("apps/worker-runtime/scripts/build-thread.mjs")) {
  // The Node pool's threads load this bundle: plain JavaScript, ready in milliseconds.
  run("npm", ["run", "-s", "build:thread", "-w", "@cyclemarket/worker-runtime"]);
}
if (existsSync("packages/client/scripts/build.mjs")) {
  // The SDK and the cyclemarket CLI as plain JavaScript with type declarations, so they run from
  // a Node script or `npx cyclemarket` outside this repository, without a TypeScript loader.
  run(process.execPath, ["packages/client/scripts/build.mjs", "--types"]);
}
if (existsSync("apps/worker-runtime/scripts/pack.mjs") && existsSync("packages/client/scripts/pack.mjs")) {
  // The worker and the client as npm package tarballs, which the Market Manager serves under
  // /downloads for `npx` and `npm install` on machines that have only Node.
  run(process.execPath, ["apps/worker-runtime/scripts/pack.mjs"]);
  run(process.execPath, ["packages/client/scripts/pack.mjs"]);
}
