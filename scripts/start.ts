// `npm start`: the whole market on this machine. Ctrl-C stops everything cleanly.
import { join } from "node:path";
import { portIsFree } from "../apps/market-manager/src/net/free-port.ts";
import { assertPortFree, buildDownloadsIfStale, buildWebIfStale, managerPorts, root, startStack } from "./stack.ts";

const log = (line: string) => console.log(line);
const marketPort = Number(process.env.MARKET_PORT ?? 4000);
const webPort = Number(process.env.PORT ?? 3000);
// Several Market Managers over one PostgreSQL (docs/SCALING.md, "Several managers"): manager i
// listens on MARKET_PORT+2i, its health port one above.
const managers = Number(process.env.MARKET_MANAGERS ?? 1);
// One sentence that says what to do, not a stack.
const didNotStart = (e: unknown): never => {
  console.error(`\nCycle Market did not start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
};
if (!Number.isInteger(managers) || managers < 1 || managers > 16) didNotStart(new Error(`MARKET_MANAGERS is a whole number from 1 to 16 (it was ${process.env.MARKET_MANAGERS})`));
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
  healthPort = Number(process.env.MARKET_HEALTH_PORT);
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
  pgPort: Number(process.env.MARKET_PG_PORT ?? 54329),
  workerSlots: Number(process.env.LOCAL_WORKER_SLOTS ?? 1),
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
