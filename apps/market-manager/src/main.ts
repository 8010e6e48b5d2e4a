import { loadConfig } from "./config.ts";
import { startMarketManager } from "./index.ts";
import { createLog } from "./ops/log.ts";

// The Market Manager as a process: `tsx apps/market-manager/src/main.ts`. Its log is JSON lines.
const cfg = loadConfig();
const log = createLog(cfg.LOG_LEVEL);
const manager = await startMarketManager(cfg, log);
log(`API listening on http://${cfg.MARKET_HOST}:${manager.port}`);
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
