import { loadConfig } from "./config.ts";
import { PortTakenError, startMarketManager } from "./index.ts";
import { createLog } from "./ops/log.ts";

// The Market Manager as a process: `tsx apps/market-manager/src/main.ts`. Its log is JSON lines.
const cfg = loadConfig();
const log = createLog(cfg.LOG_LEVEL);
const manager = await startMarketManager(cfg, log).catch((e: unknown) => {
  // A taken port is a fact the user can act on: one sentence, and the launcher is told which port.
  if (e instanceof PortTakenError) {
    log(e.message);
    process.send?.({ kind: "port-taken", port: e.port, variable: e.variable }, () => process.exit(2));
    if (!process.send) process.exit(2);
    return new Promise<never>(() => {});
  }
  // Anything else that stops the start (a database it cannot reach, a migration refused): what
  // went wrong in words, and the stack only in the debug log.
  const message = e instanceof Error ? e.message : String(e);
  log(`could not start: ${message}`, { level: "error" });
  log("could not start", { level: "debug", stack: e instanceof Error ? e.stack : undefined });
  process.send?.({ kind: "failed", message }, () => process.exit(1));
  if (!process.send) process.exit(1);
  return new Promise<never>(() => {});
});
log(`API listening on http://${cfg.MARKET_HOST}:${manager.port}`);
if (manager.healthPort !== null) log(`health checks on http://${cfg.MARKET_HOST}:${manager.healthPort}/healthz`);
if (process.send) process.send({ kind: "ready", port: manager.port, admin: manager.admin });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping`);
  await manager.stop();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
// Started by the launcher: when it goes away, so does the market.
process.on("disconnect", () => void shutdown("launcher gone"));
