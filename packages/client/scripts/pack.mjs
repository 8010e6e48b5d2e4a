// The client as an npm package tarball, dist/cyclemarket-client.tgz, which the Market Manager
// serves at /downloads/cyclemarket-client.tgz: `npm install URL/cyclemarket-client.tgz` in any
// folder gives a project the SDK (`import { connect } from "@cyclemarket/client"`, an ES module
// with declarations that stand on their own) and the `cyclemarket` CLI. It holds what
// scripts/build.mjs builds and depends on zod alone. Runs from the root postinstall and
// `npm start`; skipped when the tarball is newer than its parts.
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildClient, buildTypes } from "./build.mjs";
import { writeTarball } from "../../../scripts/npm-tarball.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
export const CLIENT_TARBALL = join(pkg, "dist", "cyclemarket-client.tgz");
const LIB = join(pkg, "dist", "lib");
const TYPES = join(pkg, "dist", "types");

async function filesUnder(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(join(e.parentPath, e.name));
  }
  return out;
}

const mtime = (path) => stat(path).then((s) => s.mtimeMs, () => -1);

/** Builds the client and its declarations if they are stale, then the tarball unless it is newer than them. */
export async function packClient({ force = false } = {}) {
  await buildClient();
  await buildTypes();
  const parts = [...(await filesUnder(LIB)), ...(await filesUnder(TYPES)), fileURLToPath(import.meta.url), join(pkg, "package.json"), join(pkg, "README.md")];
  if (!force && (await mtime(CLIENT_TARBALL)) > Math.max(...(await Promise.all(parts.map(mtime))))) return false;
  const source = JSON.parse(await readFile(join(pkg, "package.json"), "utf8"));
  const manifest = {
    name: source.name,
    version: source.version,
    description: source.description,
    type: "module",
    engines: { node: ">=20" },
    types: "./dist/types/index.d.ts",
    exports: {
      ".": { types: "./dist/types/index.d.ts", default: "./dist/lib/index.js" },
      "./job-file": { types: "./dist/types/job-file/index.d.ts", default: "./dist/lib/job-file.js" },
      "./package.json": "./package.json",
    },
    bin: { cyclemarket: "bin/cyclemarket.mjs" },
    // The one package the bundles import and the declarations name (the job file's schemas).
    dependencies: { zod: source.dependencies.zod },
  };
  const files = [
    { path: "package.json", data: JSON.stringify(manifest, null, 2) + "\n" },
    { path: "README.md", data: await readFile(join(pkg, "README.md")) },
    {
      path: "bin/cyclemarket.mjs",
      data: '#!/usr/bin/env node\nimport { main } from "../dist/lib/cli.js";\n\nprocess.exitCode = await main(process.argv.slice(2));\n',
      mode: 0o755,
    },
  ];
  for (const file of [...(await filesUnder(LIB)), ...(await filesUnder(TYPES))]) {
    if (file.endsWith(".tmp")) continue;
    files.push({ path: relative(pkg, file).split("\\").join("/"), data: await readFile(file) });
  }
  await writeTarball(CLIENT_TARBALL, files);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = await packClient({ force: process.argv.includes("--force") });
  console.log(`@cyclemarket/client: tarball ${built ? "packed" : "up to date"} (${CLIENT_TARBALL})`);
}
