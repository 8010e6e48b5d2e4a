// `npm start`: the whole market on this machine. Ctrl-C stops everything cleanly.
import { join } from "node:path";
import { portIsFree } from "../apps/market-manager/src/net/free-port.ts";
import { assertPortFree, buildDownloadsIfStale, buildWebIfStale, managerPorts, root, startStack } from "./stack.ts";

const log = (line: string) => console.log(line);
// One sentence that says what to do, not a stack.
const didNotStart = (e: unknown): never => {
  console.error(`\nCycle Market did not start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
};
/** A whole number from the environment, or its default; anything else stops the start, naming the variable. */
function wholeNumber(variable: string, fallback: number, min: number, max: number, what: string): number {
  const raw = process.env[variable];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) didNotStart(new Error(`${variable} is ${what} from ${min} to ${max} (it was ${JSON.stringify(raw)})`));
  return value;
}
const port = (variable: string, fallback: number, min = 1) => wholeNumber(variable, fallback, min, 65535, "a port number");
const marketPort = port("MARKET_PORT", 4000);
const webPort = port("PORT", 3000);
// Several Market Managers over one PostgreSQL (docs/SCALING.md, "Several managers"): manager i
// listens on MARKET_PORT+2i, its health port one above.
const managers = wholeNumber("MARKET_MANAGERS", 1, 1, 16, "a whole number");
const pgPort = port("MARKET_PG_PORT", 54329);
const workerSlots = wholeNumber("LOCAL_WORKER_SLOTS", 1, 0, 256, "a whole number");
// A taken port is named before the build, not after a minute of it. (The embedded PostgreSQL
// moves to another port by itself: nothing outside the market connects to it.)
await assertPortFree(marketPort, "MARKET_PORT").catch(didNotStart);
await assertPortFree(webPort, "PORT").catch(didNotStart);
// The health port (`/healthz` answered by a thread of its own, http/health-thread.ts): the one
// set must be free; the default is used when it is, and otherwise the market's own /healthz is.
const HEALTH_PORT = 4001;
let healthPort: number | null = HEALTH_PORT;
if (managers > 1) {
  healthPort = null; // each manager's own, MARKET_PORT+2i+1 (stack.ts managerPorts)
} else if (process.env.MARKET_HEALTH_PORT) {
  healthPort = port("MARKET_HEALTH_PORT", HEALTH_PORT, 0); // 0: any free port, named in the manager's log
  await assertPortFree(healthPort, "MARKET_HEALTH_PORT").catch(didNotStart);
} else if (!(await portIsFree(HEALTH_PORT))) {
  console.log(`Port ${HEALTH_PORT} is taken, so there is no health port: /healthz is answered on the Market Manager's port only (set MARKET_HEALTH_PORT to have one).`);
  healthPort = null;
}
await buildWebIfStale(log);
await buildDownloadsIfStale().catch(didNotStart);
const stack = await startStack({
  dataDir: process.env.MARKET_DATA_DIR ?? join(root, ".data"),
  marketPort,
  webPort,
  pgPort,
  workerSlots,
  env: healthPort === null ? {} : { MARKET_HEALTH_PORT: String(healthPort) },
  managers,
  log,
}).catch(didNotStart);
console.log(`\nCycle Market is running at ${stack.webUrl}`);
// Port 0 (any free one) is named in the Market Manager's own log line.
if (healthPort) console.log(`Health checks: http://127.0.0.1:${healthPort}/healthz`);
for (let i = 0; managers > 1 && i < managers; i++) {
  const ports = managerPorts(marketPort, i);
  console.log(`Market Manager manager-${i + 1}: http://127.0.0.1:${ports.port} (health checks on http://127.0.0.1:${ports.healthPort}/healthz)`);
}
if (stack.admin) {
  console.log("\nThis is a new market. Its admin account (shown only this once):");
  console.log(`  email:    ${stack.admin.email}`);
  console.log(`  password: ${stack.admin.password}\n`);
}
console.log("Press Ctrl-C to stop.\n");

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`\nstopping the worker, the web app, the Market Manager${managers > 1 ? "s" : ""} and PostgreSQL...`);
    void stack.stop().then(() => process.exit(0));
  });
}
