// Bundles the Node pool's thread entry (src/node/pool-thread.ts and everything it imports) into
// one JavaScript file, dist/pool-thread.mjs, so a new sandbox thread loads plain JavaScript in a
// few milliseconds instead of starting a TypeScript loader and compiling the sources (hundreds of
// milliseconds, paid again after every timeout or crash). Runs from the root postinstall and
// before the unit tests; skipped when the bundle is newer than every source file.
import { mkdir, readdir, rename, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const srcDir = join(here, "..", "src");
export const THREAD_BUNDLE = join(here, "..", "dist", "pool-thread.mjs");

async function newestSource(dir) {
  let newest = (await stat(fileURLToPath(import.meta.url))).mtimeMs;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts")) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

export async function buildThread() {
  const built = await stat(THREAD_BUNDLE).then((s) => s.mtimeMs, () => -1);
  if (built > (await newestSource(srcDir))) return false;
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: [join(srcDir, "node", "pool-thread.ts")],
    outfile: THREAD_BUNDLE,
    write: false,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
    legalComments: "none",
    // Half the bytes to read and parse at every thread start; no source map is loaded either.
    minify: true,
  });
  // Written aside and renamed into place: several processes (test workers, CLIs) may build at
  // once, and a thread must never load a half-written bundle.
  const temporary = `${THREAD_BUNDLE}.${process.pid}.tmp`;
  await mkdir(dirname(THREAD_BUNDLE), { recursive: true });
  await writeFile(temporary, out.outputFiles[0].contents);
  await rename(temporary, THREAD_BUNDLE);
  return true;
}

/** As a vitest global setup: the pool tests must run the thread built from the current sources. */
export default async function setup() {
  await buildThread();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rebuilt = await buildThread();
  console.log(`build-thread: ${rebuilt ? "built" : "up to date"} (${THREAD_BUNDLE})`);
}
