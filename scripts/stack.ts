// Starts the whole market as child processes: the Market Manager (which starts the embedded
// PostgreSQL unless DATABASE_URL is set), the web app, and a local Node worker.
// Used by `npm start` and by the end-to-end tests, so both run the market the same way.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { portIsFree, PortTakenError } from "../apps/market-manager/src/net/free-port.ts";
import { MANAGER_NODE_FLAGS } from "../apps/market-manager/src/node-flags.ts";

export const root = resolve(import.meta.dirname, "..");
const tsxLoader = ["--import", "tsx"];

/** What a Market Manager started by the launcher says over IPC once it has started, or why it could not (main.ts). */
type ManagerMessage =
  | { kind: "ready"; admin: Stack["admin"]; port: number }
  | { kind: "port-taken"; port: number; variable: string }
  | { kind: "failed"; message: string };

export interface StackOptions {
  dataDir: string;
  marketPort: number;
  webPort: number;
  pgPort: number;
  /** Start a local Node worker with this many slots (0: none). */
  workerSlots: number;
  leaseTimeoutMs?: number;
  log: (line: string) => void;
  /** Extra environment for every child (DATABASE_URL passes through from the parent). */
  env?: Record<string, string>;
  /**
   * Market Managers to run (default 1). With several, manager i (from 0) listens on
   * marketPort + 2i and its health port one above; they share one PostgreSQL, which the launcher
   * starts (or migrates, with DATABASE_URL) before them.
   */
  managers?: number;
}

export interface Stack {
  marketUrl: string;
  webUrl: string;
  admin: { email: string; password: string } | null;
  workerToken: string;
  children: Record<string, ChildProcess>;
  /** Stops the Market Manager (and its embedded PostgreSQL), as an operator's restart begins. */
  stopManager(): Promise<void>;
  /** Starts it again on the same data and ports. */
  startManager(): Promise<void>;
  stop(): Promise<void>;
}

function newestMtime(dir: string, skip: Set<string>): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path, skip) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds the web app when its sources (or the packages it bundles) changed since the last build. */
export async function buildWebIfStale(log: (line: string) => void) {
  const web = join(root, "apps/web");
  const buildId = join(web, ".next/BUILD_ID");
  const skip = new Set(["node_modules", ".next", "build"]);
  const sources = Math.max(
    newestMtime(web, skip),
    newestMtime(join(root, "apps/worker-runtime/src"), skip),
    newestMtime(join(root, "packages/costbenefit/src"), skip),
  );
  if (existsSync(buildId) && statSync(buildId).mtimeMs >= sources) return;
  log("building the web app (once after each change; about a minute)...");
  await run("npx", ["next", "build"], web, { NEXT_TELEMETRY_DISABLED: "1" });
}

/**
 * Packs the worker and the client as the npm tarballs the Market Manager serves under /downloads
 * (each package's scripts/pack.mjs, which does nothing when its tarball is newer than its sources).
 */
export async function buildDownloadsIfStale() {
  for (const script of ["apps/worker-runtime/scripts/pack.mjs", "packages/client/scripts/pack.mjs"]) {
    await run(process.execPath, [join(root, script)], root, {});
  }
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: "inherit" });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} exited with ${code}`))));
  });
}

function prefixed(child: ChildProcess, name: string, log: (line: string) => void) {
  for (const stream of [child.stdout, child.stderr]) {
    let buf = "";
    stream?.on("data", (chunk: Buffer) => {
      buf += chunk.toString();
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) log(line.startsWith("[") ? line : `[${name}] ${line}`);
    });
  }
}

function waitForHttp(url: string, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  return new Promise<void>((resolve, reject) => {
    const attempt = () => {
      fetch(url)
        .then(() => resolve())
        .catch(() => (Date.now() > until ? reject(new Error(`${url} did not answer within ${timeoutMs} ms`)) : setTimeout(attempt, 250)));
    };
    attempt();
  });
}

function stopChild(child: ChildProcess | undefined, timeoutMs = 15_000) {
  return new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    // Signal the child's whole process group (it may have started processes of its own).
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      child.kill("SIGTERM");
    }
  });
}

/** A port someone else holds is named with the variable that moves ours, before anything starts. */
export async function assertPortFree(port: number, variable: string): Promise<void> {
  if (!(await portIsFree(port))) throw new PortTakenError(port, variable);
}

/**
 * The web app's server (apps/web/server.ts: Next.js behind the step that writes the client's
 * address) on `port`, resolved once this server (not another program on the port) says it is
 * ready; a taken port rejects with PortTakenError naming PORT.
 */
export function startWebApp(o: { port: number; host?: string; env: Record<string, string>; log: (line: string) => void }): Promise<ChildProcess> {
  const web = spawn(process.execPath, [...tsxLoader, "server.ts", "-p", String(o.port), ...(o.host ? ["-H", o.host] : [])], {
    cwd: join(root, "apps/web"),
    env: { ...process.env, ...o.env, PORT: String(o.port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const seen: string[] = [];
  prefixed(web, "web", (line) => {
    seen.push(line);
    o.log(line);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stopChild(web).then(() => reject(new Error(`the web app was not ready within 60 s:\n${seen.slice(-10).join("\n")}`)));
    }, 60_000);
    const ready = setInterval(() => {
      if (seen.some((l) => /\bReady in\b/.test(l))) {
        clearInterval(ready);
        clearTimeout(timer);
        web.off("exit", onExit);
        resolve(web);
      }
    }, 50);
    const onExit = (code: number | null) => {
      clearInterval(ready);
      clearTimeout(timer);
      // The output is read a moment after the exit: the last lines may still be on their way.
      setTimeout(() => {
        if (seen.some((l) => /EADDRINUSE/.test(l))) reject(new PortTakenError(o.port, "PORT"));
        else reject(new Error(`the web app exited with ${code} before it was ready:\n${seen.slice(-10).join("\n")}`));
      }, 100);
    };
    web.once("exit", onExit);
  });
}

/** Manager i's API port and health port in a market of several (StackOptions.managers). */
export const managerPorts = (marketPort: number, i: number) => ({ port: marketPort + 2 * i, healthPort: marketPort + 2 * i + 1 });

export async function startStack(opts: StackOptions): Promise<Stack> {
  const count = opts.managers ?? 1;
  if (count > 1) return startSeveral(opts, count);
  await assertPortFree(opts.marketPort, "MARKET_PORT");
  await assertPortFree(opts.webPort, "PORT");
  const marketUrl = `http://127.0.0.1:${opts.marketPort}`;
  const webUrl = `http://localhost:${opts.webPort}`;
  const tokenFile = join(opts.dataDir, "local-worker-token");
  const baseEnv = { ...opts.env, NEXT_TELEMETRY_DISABLED: "1" };
  const children: Record<string, ChildProcess> = {};
  // Whatever happens to the launcher, its children do not outlive it.
  process.once("exit", () => {
    for (const child of Object.values(children)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  const startManager = async () => {
    const manager = fork(join(root, "apps/market-manager/src/main.ts"), [], {
      execArgv: [...tsxLoader, ...MANAGER_NODE_FLAGS],
      env: {
        ...process.env,
        ...baseEnv,
        MARKET_PORT: String(opts.marketPort),
        MARKET_DATA_DIR: opts.dataDir,
        MARKET_PG_PORT: String(opts.pgPort),
        PUBLIC_URL: webUrl,
        LOCAL_WORKER_TOKEN_FILE: tokenFile,
        ...(opts.leaseTimeoutMs ? { LEASE_TIMEOUT_MS: String(opts.leaseTimeoutMs) } : {}),
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // Own process groups: Ctrl-C reaches only the launcher, which stops the children in order
      // (the worker departs while the Market Manager can still hear it).
      detached: true,
    });
    children.manager = manager;
    prefixed(manager, "market", opts.log);
    return new Promise<{ admin: Stack["admin"] }>((resolve, reject) => {
      manager.once("message", (m: ManagerMessage) => (m.kind === "port-taken" ? reject(new PortTakenError(m.port, m.variable)) : m.kind === "failed" ? reject(new Error(`the Market Manager could not start: ${m.message}`)) : resolve(m)));
      manager.once("exit", (code) => reject(new Error(`the Market Manager exited with ${code} before it was ready`)));
    });
  };
  const ready = await startManager();

  try {
    children.web = await startWebApp({ port: opts.webPort, env: { ...baseEnv, MARKET_API_URL: marketUrl }, log: opts.log });
  } catch (e) {
    await stopChild(children.manager!, 30_000);
    throw e;
  }
  await waitForHttp(webUrl, 60_000);

  const workerToken = readFileSync(tokenFile, "utf8").trim();
  const worker = startLocalWorker(marketUrl, workerToken, opts, baseEnv);
  if (worker) children.worker = worker;

  return {
    marketUrl,
    webUrl,
    admin: ready.admin,
    workerToken,
    children,
    stopManager: () => stopChild(children.manager, 30_000),
    async startManager() {
      await startManager();
    },
    async stop() {
      await stopChild(children.worker);
      await stopChild(children.web);
      await stopChild(children.manager, 30_000);
    },
  };
}

/**
 * The market with several Market Managers (docs/SCALING.md, "Several managers"): one PostgreSQL,
 * started and migrated here once, then the managers one after the other (the first makes the
 * admin and the local worker's token), the web app in front of all of them, and the local worker
 * registering through the web app (it is sent to the manager with the most room).
 */
async function startSeveral(opts: StackOptions, count: number): Promise<Stack> {
  for (let i = 0; i < count; i++) {
    const { port, healthPort } = managerPorts(opts.marketPort, i);
    await assertPortFree(port, i === 0 ? "MARKET_PORT" : `MARKET_PORT (manager ${i + 1} uses MARKET_PORT+${2 * i})`);
    await assertPortFree(healthPort, `MARKET_PORT (manager ${i + 1}'s health port is MARKET_PORT+${2 * i + 1})`);
  }
  await assertPortFree(opts.webPort, "PORT");
  const webUrl = `http://localhost:${opts.webPort}`;
  const tokenFile = join(opts.dataDir, "local-worker-token");
  const baseEnv = { ...opts.env, NEXT_TELEMETRY_DISABLED: "1" };
  const children: Record<string, ChildProcess> = {};
  process.once("exit", () => {
    for (const child of Object.values(children)) if (child.exitCode === null) child.kill("SIGKILL");
  });
  const db = fork(join(root, "scripts/database.ts"), [], {
    execArgv: tsxLoader,
    env: { ...process.env, ...baseEnv, MARKET_DATA_DIR: opts.dataDir, MARKET_PG_PORT: String(opts.pgPort) },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    detached: true,
  });
  children.database = db;
  prefixed(db, "database", opts.log);
  const database = await new Promise<{ url: string }>((resolve, reject) => {
    db.once("message", (m: { url: string }) => resolve(m));
    db.once("exit", (code) => reject(new Error(`the market's PostgreSQL did not start (exit ${code})`)));
  });
  const urls: string[] = [];
  const start = (i: number) => {
    const { port, healthPort } = managerPorts(opts.marketPort, i);
    const id = `manager-${i + 1}`;
    const manager = fork(join(root, "apps/market-manager/src/main.ts"), [], {
      execArgv: [...tsxLoader, ...MANAGER_NODE_FLAGS],
      env: {
        ...process.env,
        ...baseEnv,
        DATABASE_URL: database.url,
        MARKET_MIGRATE: "0",
        MARKET_MANAGER_ID: id,
        MARKET_MANAGER_URL: `http://127.0.0.1:${port}`,
        MARKET_PORT: String(port),
        MARKET_HEALTH_PORT: String(healthPort),
        MARKET_DATA_DIR: opts.dataDir,
        PUBLIC_URL: webUrl,
        LOCAL_WORKER_TOKEN_FILE: tokenFile,
        ...(opts.leaseTimeoutMs ? { LEASE_TIMEOUT_MS: String(opts.leaseTimeoutMs) } : {}),
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      detached: true,
    });
    children[i === 0 ? "manager" : id] = manager;
    prefixed(manager, id, opts.log);
    return new Promise<{ admin: Stack["admin"] }>((resolve, reject) => {
      manager.once("message", (m: ManagerMessage) => (m.kind === "port-taken" ? reject(new PortTakenError(m.port, m.variable)) : m.kind === "failed" ? reject(new Error(`the Market Manager could not start: ${m.message}`)) : resolve(m)));
      manager.once("exit", (code) => reject(new Error(`the Market Manager ${id} exited with ${code} before it was ready`)));
    });
  };
  const stopManagers = async () => {
    await Promise.all(Object.entries(children).filter(([name]) => name.startsWith("manager")).map(([, c]) => stopChild(c, 30_000)));
    await stopChild(children.database, 30_000);
  };
  let admin: Stack["admin"] = null;
  try {
    for (let i = 0; i < count; i++) {
      const ready = await start(i);
      admin ??= ready.admin;
      urls.push(`http://127.0.0.1:${managerPorts(opts.marketPort, i).port}`);
    }
    children.web = await startWebApp({ port: opts.webPort, env: { ...baseEnv, MARKET_API_URL: urls.join(",") }, log: opts.log });
  } catch (e) {
    await stopManagers();
    throw e;
  }
  await waitForHttp(webUrl, 60_000);
  // Its front door is the web app, which reaches whichever manager answers.
  const workerToken = readFileSync(tokenFile, "utf8").trim();
  const worker = startLocalWorker(webUrl, workerToken, opts, baseEnv);
  if (worker) children.worker = worker;
  return {
    marketUrl: urls[0]!,
    webUrl,
    admin,
    workerToken,
    children,
    stopManager: () => stopChild(children.manager, 30_000),
    async startManager() {
      await start(0);
    },
    async stop() {
      await stopChild(children.worker);
      await stopChild(children.web);
      await stopManagers();
    },
  };
}

/** The launcher's local Node worker selling this machine's cycles at `url`, or none with no slots asked for. */
function startLocalWorker(url: string, token: string, opts: { workerSlots: number; log: (line: string) => void }, env: Record<string, string>) {
  if (opts.workerSlots <= 0) return undefined;
  const worker = spawn(
    process.execPath,
    [join(root, "apps/worker-runtime/bin/worker.mjs"), "--url", url, "--token", token, "--slots", String(opts.workerSlots), "--name", "local-worker"],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  prefixed(worker, "worker", opts.log);
  return worker;
}
