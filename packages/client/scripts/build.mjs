// Builds the package for use outside this repository, where there is no TypeScript loader:
// dist/lib/*.js (the SDK, the job file and the CLI bundled by esbuild, with every package they use
// but zod) and, with --types, dist/types/*.d.ts (scripts/types.mjs).
// Runs from the root postinstall (after the Prisma client it types against is generated; a
// `prepare` script would run before that in a fresh `npm ci`), and before the integration tests; the
// JavaScript is skipped when it is newer than every source file.
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const lib = join(pkg, "dist", "lib");
const ENTRIES = { index: "src/index.ts", "job-file": "src/job-file/index.ts", cli: "src/cli/main.ts" };
/** Sources bundled in: this package's and the workspace packages it imports. */
const SOURCES = [join(pkg, "src"), join(pkg, "..", "costbenefit", "src")];

async function newest(dirs) {
  // The script and package.json (its dependencies decide what is bundled in) count as sources too.
  let latest = Math.max((await stat(fileURLToPath(import.meta.url))).mtimeMs, (await stat(join(pkg, "package.json"))).mtimeMs);
  for (const dir of dirs) {
    for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
      if (e.isFile() && e.name.endsWith(".ts")) latest = Math.max(latest, (await stat(join(e.parentPath, e.name))).mtimeMs);
    }
  }
  return latest;
}

export async function buildClient({ force = false } = {}) {
  const built = await stat(join(lib, "cli.js")).then((s) => s.mtimeMs, () => -1);
  if (!force && built > (await newest(SOURCES))) return false;
  const { build } = await import("esbuild");
  // Built aside and renamed into place, so a CLI started meanwhile never loads half a build.
  const temporary = `${lib}.${process.pid}.tmp`;
  await build({
    absWorkingDir: pkg,
    entryPoints: ENTRIES,
    outdir: temporary,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Only zod stays an import (the published package's one dependency, whose types the job
    // file's schemas are written in); the tRPC client and the EventSource are inlined, so
    // installing the package brings neither them nor the TypeScript compiler tRPC asks for.
    external: ["zod"],
    chunkNames: "chunks/[name]-[hash]",
    logLevel: "warning",
    legalComments: "none",
  });
  await mkdir(dirname(lib), { recursive: true });
  await rm(lib, { recursive: true, force: true });
  await rename(temporary, lib);
  return true;
}

/**
 * What the declarations are written from: the sources above and the Market Manager's, whose
 * router's answers the SDK's types spell out (src/sdk/wire.ts).
 */
const TYPE_SOURCES = [...SOURCES, join(pkg, "..", "..", "apps", "market-manager", "src")];

/** The declarations (scripts/types.mjs), unless they are newer than every file they are written from. */
export async function buildTypes({ force = false } = {}) {
  const built = await stat(join(pkg, "dist", "types", "index.d.ts")).then((s) => s.mtimeMs, () => -1);
  const inputs = [join(pkg, "scripts", "types.mjs"), join(pkg, "tsconfig.build.json")];
  const latest = Math.max(await newest(TYPE_SOURCES), ...(await Promise.all(inputs.map((f) => stat(f).then((s) => s.mtimeMs)))));
  if (!force && built > latest) return false;
  // The compiler loads only when the declarations are written.
  const { buildTypes: write } = await import("./types.mjs");
  await write();
  return true;
}

/** As a vitest global setup: the CLI the tests run is built from the current sources. */
export default async function setup() {
  await buildClient();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes("--force");
  const rebuilt = await buildClient({ force });
  const typed = process.argv.includes("--types") ? await buildTypes({ force }) : null;
  const said = (done) => (done ? "built" : "up to date");
  console.log(`@cyclemarket/client: dist/lib ${said(rebuilt)}${typed === null ? "" : `, dist/types ${said(typed)}`}`);
}
