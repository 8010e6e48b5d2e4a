// Bundles the two Node entries of the worker runtime with esbuild, so neither runs a TypeScript
// loader: the pool's thread (src/node/pool-thread.ts and everything it imports) into
// dist/pool-thread.mjs, so a new sandbox thread loads plain JavaScript in a few milliseconds
// instead of starting a loader and compiling the sources (hundreds of milliseconds, paid again
// after every timeout or crash); and the worker CLI (src/node/worker-main.ts) into
// dist/cli/worker.mjs, which bin/worker.mjs runs and the worker's npm package carries
// (scripts/pack.mjs). Runs from the root postinstall, before the unit tests and when the CLI
// starts; skipped when both bundles are newer than every source file.
import { mkdir, readdir, rename, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const srcDir = join(here, "..", "src");
export const THREAD_BUNDLE = join(here, "..", "dist", "pool-thread.mjs");
// Two levels below the package, as src/node/pool.ts is: it finds the thread bundle relative to itself.
export const CLI_BUNDLE = join(here, "..", "dist", "cli", "worker.mjs");

async function newestSource(dir) {
  let newest = (await stat(fileURLToPath(import.meta.url))).mtimeMs;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts")) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

const BUNDLES = [
  // Everything inlined and minified: half the bytes to read and parse at every thread start.
  { entry: join(srcDir, "node", "pool-thread.ts"), outfile: THREAD_BUNDLE, options: { minify: true } },
  // The packages it uses (zod, the tRPC client) inlined too: the worker's npm package
  // (scripts/pack.mjs) then needs nothing from a registry, and `npx` starts it at once.
  { entry: join(srcDir, "node", "worker-main.ts"), outfile: CLI_BUNDLE, options: {} },
];

export async function buildThread() {
  const built = Math.min(...(await Promise.all(BUNDLES.map((b) => stat(b.outfile).then((s) => s.mtimeMs, () => -1)))));
  if (built > (await newestSource(srcDir))) return false;
  const { build } = await import("esbuild");
  for (const { entry, outfile, options } of BUNDLES) {
    const out = await build({
      entryPoints: [entry],
      outfile,
      write: false,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      logLevel: "warning",
      legalComments: "none",
      ...options,
    });
    // Written aside and renamed into place: several processes (test workers, CLIs) may build at
    // once, and nothing may load a half-written bundle.
    const temporary = `${outfile}.${process.pid}.tmp`;
    await mkdir(dirname(outfile), { recursive: true });
    await writeFile(temporary, out.outputFiles[0].contents);
    await rename(temporary, outfile);
  }
  return true;
}

/** As a vitest global setup: the pool tests must run the thread built from the current sources. */
export default async function setup() {
  await buildThread();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rebuilt = await buildThread();
  console.log(`build-thread: ${rebuilt ? "built" : "up to date"} (${THREAD_BUNDLE}, ${CLI_BUNDLE})`);
}
