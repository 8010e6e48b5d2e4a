// One embedded PostgreSQL for a whole test run. The market's schema is migrated once, by the
// market's own migration runner, into the database the embedded server makes (`cyclemarket`),
// which then serves as a template: each test market gets a database cloned from it (CREATE
// DATABASE ... TEMPLATE, a file copy) where a server of its own meant initdb, a start and the
// migrations again. Roles, passwords and the schema's grants are the embedded server's own
// (db/embedded.ts, db/sql/owner.ts), so a market on a clone connects exactly as on a fresh server:
// as the application's role, not a superuser, to a migrated database with no user yet.
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { APP_ROLE, startEmbeddedPostgres } from "../../apps/market-manager/src/db/embedded.ts";
import { applyMigrations } from "../../apps/market-manager/src/db/migrate.ts";
import { grantAppTables, withClient } from "../../apps/market-manager/src/db/sql/owner.ts";
import { freePort } from "../../apps/market-manager/src/net/free-port.ts";

/** What test processes need to clone and reach databases on the shared server (serializable). */
export interface SharedPostgres {
  /** The owner's connection to the maintenance database, for CREATE and DROP DATABASE. */
  adminUrl: string;
  /** The application role's connection to the template; a clone's URL differs only in its name. */
  appUrl: string;
  template: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedPostgres: SharedPostgres;
  }
}

const PREFIX = "cyclemarket-shared-pg-";
/** The test run's process, kept beside the data: a folder whose run is gone is an orphan. */
const RUNNER_FILE = "runner-pid";

/** Starts the run's server (in a temporary folder the server's user can enter) and migrates its template. */
export async function startSharedPostgres(): Promise<{ shared: SharedPostgres; stop(): Promise<void> }> {
  await removeOrphans();
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user when we are root
  writeFileSync(join(dir, RUNNER_FILE), String(process.pid));
  let server: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
  try {
    server = await startEmbeddedPostgres({ dataDir: join(dir, "postgres"), port: await freePort() });
    // As the market does on an embedded server's first start (db/database.ts).
    await applyMigrations(server.ownerUrl);
    await grantAppTables(server.ownerUrl, APP_ROLE);
    const template = new URL(server.ownerUrl).pathname.slice(1);
    const adminUrl = withDatabase(server.ownerUrl, "postgres");
    await withClient(adminUrl, async (c) => {
      // A clone needs its template free of sessions. The migration runner's pool keeps its idle
      // connection; nothing connects to the template after this.
      await c.query(`ALTER DATABASE ${c.escapeIdentifier(template)} WITH ALLOW_CONNECTIONS false`);
      await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [template]);
    });
    const running = server;
    return {
      shared: { adminUrl, appUrl: server.url, template },
      async stop() {
        await running.stop();
        removeDataFolder(dir);
      },
    };
  } catch (e) {
    await server?.stop().catch(() => {});
    removeDataFolder(dir);
    throw e;
  }
}

let clones = 0;

/**
 * A database of the test's own, cloned from the migrated template. `disconnect` ends every
 * session on it, as a stopped embedded server would (a restart then finds none of the old ones).
 */
export async function cloneDatabase(shared: SharedPostgres) {
  const name = `market_${process.pid}_${++clones}`;
  await withClient(shared.adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)} TEMPLATE ${c.escapeIdentifier(shared.template)}`));
  const endSessions = () => withClient(shared.adminUrl, (c) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name])).then(() => {});
  return {
    url: withDatabase(shared.appUrl, name),
    disconnect: endSessions,
    drop: () => withClient(shared.adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`)).then(() => {}),
  };
}

/** A clone on the run's shared server, for a test whose project starts one (vitest.config.ts). */
export async function sharedDatabase() {
  const { inject } = await import("vitest");
  const shared = inject("sharedPostgres");
  if (!shared) throw new Error("this test's project starts no shared PostgreSQL: add test/support/postgres-setup.ts to its globalSetup");
  return cloneDatabase(shared);
}

/** The same server and credentials as `url`, on the database `name`. */
export function withDatabase(url: string, name: string) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A test data folder and, as root when the server's user could not enter it, the folder its
 * data was placed in instead (db/placement.ts links it as `pgdata`).
 */
export function removeDataFolder(dir: string) {
  const link = join(dir, "postgres", "pgdata");
  try {
    if (lstatSync(link).isSymbolicLink()) {
      const home = dirname(resolve(dirname(link), readlinkSync(link)));
      if (basename(home).startsWith("data-")) rmSync(home, { recursive: true, force: true });
    }
  } catch {
    // no server was placed there
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A run killed outright (SIGKILL) cannot stop its server: the next run stops the servers of runs
 * that are gone and removes their folders. Servers of runs still going are left alone.
 */
async function removeOrphans() {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const runner = Number(readText(join(dir, RUNNER_FILE)));
    if (!Number.isInteger(runner) || runner <= 1 || alive(runner)) continue;
    const lock = readText(join(dir, "postgres", "pgdata", "postmaster.pid"));
    const server = Number(lock?.split("\n")[0]);
    if (Number.isInteger(server) && server > 1 && alive(server) && /postgres/.test(readText(`/proc/${server}/cmdline`) ?? "")) {
      await stopServer(server);
    }
    removeDataFolder(dir);
  }
}

async function stopServer(pid: number) {
  for (const [signal, waitMs] of [["SIGINT", 10_000], ["SIGKILL", 5_000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    const until = Date.now() + waitMs;
    while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    if (!alive(pid)) return;
  }
}

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readText(file: string): string | null {
  try {
    return existsSync(file) ? readFileSync(file, "utf8") : null;
  } catch {
    return null;
  }
}
