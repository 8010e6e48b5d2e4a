// Builds the package for use outside this repository, where there is no TypeScript loader:
// dist/lib/*.js (the SDK, the job file and the CLI bundled by esbuild; the workspace packages they
// use are bundled in, npm dependencies stay imports) and, with --types, dist/types/*.d.ts (tsc).
// Runs from the root postinstall (after the Prisma client it types against is generated; a
// `prepare` script would run before that in a fresh `npm ci`), and before the integration tests; the
// JavaScript is skipped when it is newer than every source file.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
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
  const { dependencies } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
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
    external: Object.keys(dependencies),
    chunkNames: "chunks/[name]-[hash]",
    logLevel: "warning",
    legalComments: "none",
  });
  await mkdir(dirname(lib), { recursive: true });
  await rm(lib, { recursive: true, force: true });
  await rename(temporary, lib);
  return true;
}

export function buildTypes() {
  execFileSync(process.execPath, [join(pkg, "..", "..", "node_modules", "typescript", "bin", "tsc"), "-p", join(pkg, "tsconfig.build.json")], { stdio: "inherit" });
}

/** As a vitest global setup: the CLI the tests run is built from the current sources. */
export default async function setup() {
  await buildClient();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rebuilt = await buildClient({ force: process.argv.includes("--force") });
  if (process.argv.includes("--types")) buildTypes();
  console.log(`@cyclemarket/client: ${rebuilt ? "built" : "up to date"} (dist/lib${process.argv.includes("--types") ? ", dist/types" : ""})`);
}
