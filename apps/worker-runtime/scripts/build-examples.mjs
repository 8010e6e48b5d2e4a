// Compiles the AssemblyScript examples in examples/src to WASI preview 1 command modules
// in examples/build. Runs from the root postinstall, so it must work offline and be quick:
// an example is rebuilt only when one of the sources is newer than its output.
import { createRequire } from "node:module";
import { mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const srcDir = join(here, "..", "examples", "src");
const outDir = join(here, "..", "examples", "build");
// Modules shared by several examples; they are not examples themselves.
const LIBRARIES = new Set(["rng.ts"]);

const require = createRequire(import.meta.url);
const wasiConfig = require.resolve("@assemblyscript/wasi-shim/asconfig.json");

async function mtime(path) {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return -1;
  }
}

async function main() {
  const files = (await readdir(srcDir)).filter((f) => f.endsWith(".ts")).sort();
  const newestSource = Math.max(
    ...(await Promise.all([...files.map((f) => join(srcDir, f)), fileURLToPath(import.meta.url)].map(mtime))),
  );
  const examples = files.filter((f) => !LIBRARIES.has(f));
  await mkdir(outDir, { recursive: true });

  let asc;
  let built = 0;
  for (const file of examples) {
    const name = file.slice(0, -3);
    const out = join(outDir, `${name}.wasm`);
    if ((await mtime(out)) > newestSource) continue;
    asc ??= (await import("assemblyscript/asc")).default;
    const { error, stderr } = await asc.main([
      relative(process.cwd(), join(srcDir, file)),
      // The compiler's API loses the config's library folder when the config path is
      // absolute, so every path is given relative to the working directory.
      "--config", relative(process.cwd(), wasiConfig),
      "--outFile", relative(process.cwd(), out),
      "--optimizeLevel", "3",
      "--shrinkLevel", "0",
      "--runtime", "incremental",
      "--noAssert",
      // Initial memory stays small; the sandbox caps growth per task.
      "--initialMemory", "1",
    ]);
    if (error) {
      process.stderr.write(stderr.toString());
      throw new Error(`build-examples: ${file} did not compile: ${error.message}`);
    }
    built++;
  }
  console.log(`build-examples: ${built} built, ${examples.length - built} up to date (${outDir})`);
}

await main();
