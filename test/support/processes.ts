// The market as separate operating-system processes, for fault tests: a Market Manager started
// the way the launcher starts it (scripts/stack.ts), real Node workers (the cyclemarket-worker
// command), and helpers to kill them without warning and to look at what was committed.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PUBLIC_URL, TEST_MARKET_ENV, signIn, signUp } from "./market.ts";
import { onFreePort, PortTakenError } from "../../apps/market-manager/src/net/free-port.ts";

export { signIn, signUp };

export const root = resolve(import.meta.dirname, "../..");

/** Lines a child printed, kept for assertions and for the failure message. */
export class Output {
  readonly lines: string[] = [];
  private waiters: { match: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];

  constructor(child: ChildProcess, readonly name: string, echo = process.env.FAULTS_VERBOSE === "1") {
    for (const stream of [child.stdout, child.stderr]) {
      let buf = "";
      stream?.on("data", (chunk: Buffer) => {
        buf += chunk.toString();
        const lines = buf.split("\n");
        buf = lines.pop() ?? "";
        for (const line of lines) this.add(line, echo);
      });
    }
  }

  private add(line: string, echo: boolean) {
    if (!line.trim()) return;
    this.lines.push(line);
    if (echo) console.log(`${this.name}| ${line}`);
    for (const w of [...this.waiters]) {
      const m = w.match.exec(line);
      if (m) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  }

  /** The first line from now on (or already seen, with `seen`) that matches. */
  next(match: RegExp, timeoutMs = 60_000, seen = false): Promise<RegExpExecArray> {
    if (seen) {
      for (const line of this.lines) {
        const m = match.exec(line);
        if (m) return Promise.resolve(m);
      }
    }
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (m: RegExpExecArray) => (clearTimeout(timer), resolve(m)) };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`${this.name} printed nothing matching ${match} within ${timeoutMs} ms; last lines:\n${this.tail()}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  tail(n = 30) {
    return this.lines.slice(-n).join("\n");
  }
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Resolves when the child has exited (at once if it has). */
export function exit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (exited(child)) return resolve();
    child.once("exit", () => resolve());
  });
}

/** SIGKILL: the process gets no chance to clean up, as in a crash or an out-of-memory kill. */
export async function killHard(child: ChildProcess) {
  child.kill("SIGKILL");
  await exit(child);
}

/** SIGTERM, then SIGKILL if it has not gone after `timeoutMs`. */
export async function stopGently(child: ChildProcess | undefined, timeoutMs = 20_000) {
  if (!child || exited(child)) return;
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  child.kill("SIGTERM");
  await exit(child);
  clearTimeout(timer);
}

/** A temporary folder PostgreSQL (running as its own user when we are root) can enter. */
export function tempDir(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

export interface ManagerOptions {
  /** The API's port; when none is given a free one is chosen, and another if that one is taken. */
  port?: number;
  dataDir: string;
  /** The embedded PostgreSQL's port (ignored with databaseUrl); it moves by itself when taken. */
  pgPort?: number;
  databaseUrl?: string;
  leaseTimeoutMs: number;
  /** The clone to run it from (this one unless said). */
  repo?: string;
  /** Settings over the tests' usual ones (TEST_MARKET_ENV). */
  env?: Record<string, string>;
}

export interface ManagerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  out: Output;
  admin: { email: string; password: string } | null;
  /** The file the manager keeps its local worker's API token in (a producer's token). */
  tokenFile: string;
  /** The development outbox the manager mails verification links to. */
  outbox: string;
}

/**
 * `node --import tsx apps/market-manager/src/main.ts`, resolved once it says it is ready. A port
 * the test named is used or refused (PortTakenError); a port chosen here is retried elsewhere.
 */
export function startManager(o: ManagerOptions): Promise<ManagerProcess> {
  if (o.port !== undefined) return startManagerOn(o.port, o);
  return onFreePort((port) => startManagerOn(port, o));
}

async function startManagerOn(port: number, o: ManagerOptions): Promise<ManagerProcess> {
  const tokenFile = join(o.dataDir, "local-worker-token");
  const { DATABASE_URL: _inherited, ...env } = process.env;
  const repo = o.repo ?? root;
  const child = fork(join(repo, "apps/market-manager/src/main.ts"), [], {
    execArgv: ["--import", "tsx"],
    cwd: repo,
    env: {
      ...env,
      MARKET_PORT: String(port),
      MARKET_DATA_DIR: o.dataDir,
      ...(o.pgPort ? { MARKET_PG_PORT: String(o.pgPort) } : {}),
      ...(o.databaseUrl ? { DATABASE_URL: o.databaseUrl } : {}),
      PUBLIC_URL,
      LEASE_TIMEOUT_MS: String(o.leaseTimeoutMs),
      LOCAL_WORKER_TOKEN_FILE: tokenFile,
      ...TEST_MARKET_ENV,
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const out = new Output(child, "market");
  const ready = await new Promise<{ admin: ManagerProcess["admin"] }>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the Market Manager exited (${code}) before it was ready:\n${out.tail()}`));
    child.once("exit", onExit);
    child.once("message", (m: { kind: string; admin: ManagerProcess["admin"]; port: number; variable: string; message?: string }) => {
      child.off("exit", onExit);
      if (m.kind === "port-taken") void exit(child).then(() => reject(new PortTakenError(m.port, m.variable)));
      else if (m.kind === "failed") void exit(child).then(() => reject(new Error(`the Market Manager could not start: ${m.message}\n${out.tail()}`)));
      else resolve(m);
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, port, out, admin: ready.admin, tokenFile, outbox: join(o.dataDir, "outbox.jsonl") };
}

export interface WorkerProcess {
  child: ChildProcess;
  out: Output;
  name: string;
  /** Every machine id the worker registered as, in order. */
  machineIds(): string[];
}

/** The Node worker command (`cyclemarket-worker`) with one slot, registered with the market. */
/** A Node worker of one slot; `price` (credits a second, 1 by default) decides which machine the market prefers. */
export async function startWorker(url: string, token: string, name: string, price = 1, extra: string[] = []): Promise<WorkerProcess> {
  const args = ["--url", url, "--token", token, "--slots", "1", "--name", name, "--price", String(price), ...extra];
  const child = spawn(process.execPath, [join(root, "apps/worker-runtime/bin/worker.mjs"), ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = new Output(child, name);
  await out.next(/registered as machine (\S+)/, 60_000);
  const ids = /registered as machine (\S+)/;
  return { child, out, name, machineIds: () => out.lines.map((l) => ids.exec(l)?.[1]).filter((x): x is string => !!x) };
}

export type Client = Awaited<ReturnType<typeof signUp>>;

/**
 * The running embedded server's owner connection; `pgDir` holds its data and its 0600 password
 * file. Its port is read from the server's lock file, since a taken port moves it elsewhere.
 */
export function embeddedUrl(pgDir: string) {
  const port = Number(readFileSync(join(pgDir, "pgdata/postmaster.pid"), "utf8").split("\n")[3]);
  return `postgresql://cyclemarket:${encodeURIComponent(readFileSync(join(pgDir, "owner-password"), "utf8").trim())}@127.0.0.1:${port}/cyclemarket`;
}

/**
 * After a test: a PostgreSQL still running on this data folder (left by a manager that was
 * killed and not restarted, say) is shut down, so tests leave no servers behind.
 */
export async function stopLeftoverPostgres(dataDir: string) {
  const lockFile = join(dataDir, "postgres/pgdata/postmaster.pid");
  if (!existsSync(lockFile)) return;
  const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(100);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value that is not undefined, or fails with `what`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 200): Promise<T> {
  const until = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
    await sleep(everyMs);
  }
}

