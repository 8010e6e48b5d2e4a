import { createHmac, randomBytes } from "node:crypto";
import { DEFAULT_TERMS } from "@cyclemarket/costbenefit";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createApiToken, TokenCache, userForToken } from "./auth/tokens.ts";
import { SessionCache } from "./auth/session-cache.ts";
import type { AddressInfo } from "node:net";
import type { Config } from "./config.ts";
import { Database } from "./db/client.ts";
import { openDatabase } from "./db/database.ts";
import { createAuth } from "./auth/auth.ts";
import { consoleMailer } from "./auth/mailer.ts";
import { ensureStartingCredits } from "./ledger/starting-credits.ts";
import { join } from "node:path";
import { Market } from "./market/market.ts";
import { createEngine } from "./market/engine-costbenefit.ts";
import { restoreMarket } from "./market/restore.ts";
import { loadOwners } from "./market/standing.ts";
import { applySettings, loadSettings } from "./market/settings.ts";
import { startSweeper } from "./market/sweeper.ts";
import { Managers } from "./market/managers.ts";
import { startManagerBeat } from "./market/adopt.ts";
import { startSampler } from "./ops/sampler.ts";
import { opsOf } from "./ops/ops.ts";
import { createServer, LISTEN_BACKLOG } from "./http/server.ts";
import { startHealthThread, type HealthThread } from "./http/health-thread.ts";
import { createQuotas } from "./limits/quotas.ts";
import { authRules } from "./auth/auth-limits.ts";
import { CLIENT_ADDRESS_HEADER } from "./http/auth-route.ts";
import { systemClock, type Log, type Services } from "./services.ts";
import { isAddressInUse, PortTakenError } from "./net/free-port.ts";
import { closeIntake } from "./tasks/intake-pool.ts";
import { ModuleDownloads } from "./tasks/module-downloads.ts";
import { ADMIN_EMAIL, LOCAL_WORKER_EMAIL } from "./auth/market-accounts.ts";

// A delayed job is given up after waiting this long for the market to be able to run it.
export const MAX_DELAY_MS = 10 * 60_000;

export type { AppRouter } from "./api/router.ts";
export { loadConfig } from "./config.ts";
export { PortTakenError } from "./net/free-port.ts";

export interface RunningManager {
  port: number;
  /** The health thread's port (MARKET_HEALTH_PORT), or null when there is none. */
  healthPort: number | null;
  services: Services;
  /** Set when this start created the first user of an empty market. */
  admin: { email: string; password: string } | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  /**
   * Called when another manager took this one over (it was silent past the timeout, stopped by
   * its host, say): what it held is that one's now, so it must stop. Exits the process unless set.
   */
  onTakenOver?: () => void;
}

/** Opens (or starts) the database, rebuilds the market and serves the API. */
export async function startMarketManager(cfg: Config, log: Log, options: StartOptions = {}): Promise<RunningManager> {
  const database = await openDatabase(cfg, log);
  const connections = new Database(database.url, { idleInTransactionMs: cfg.MARKET_MANAGER_TIMEOUT_MS });
  const db = connections.db;
  // The market is made just below; a verification can only arrive once the server listens.
  let market: Market | undefined;
  const auth = createAuth({
    db,
    secret: cfg.authSecret,
    publicUrl: cfg.PUBLIC_URL,
    mailer: consoleMailer(join(cfg.MARKET_DATA_DIR, "outbox.jsonl"), log),
    onVerified: async (userId) => {
      if (!market) return;
      await ensureStartingCredits(market, userId);
      // A confirmed address counts towards standing from now on.
      if (market.state.owners.has(userId)) await loadOwners(market, [userId]);
    },
    rateLimit: { rules: authRules(cfg), defaultMax: cfg.AUTH_REQUESTS_PER_MINUTE, addressHeader: CLIENT_ADDRESS_HEADER },
  });
  market = new Market(connections, createEngine(), systemClock, log, {
    leaseTimeoutMs: cfg.LEASE_TIMEOUT_MS,
    startingCreditsMicro: 0n, // from the settings, just below
    terms: DEFAULT_TERMS,
    maxDelayMs: MAX_DELAY_MS,
    // The spot checks' draws come from a secret of the market's own: a producer cannot tell which of its runs are checked.
    verification: { seed: createHmac("sha256", cfg.authSecret).update("spot-checks").digest("hex"), trustAll: cfg.TRUST_ALL_PRODUCERS === "1" },
  });
  await applySettings(
    market,
    await loadSettings(db, {
      horizonSeconds: 3600,
      priceConstant: 1,
      leaseTimeoutMs: cfg.LEASE_TIMEOUT_MS,
      policy: "miserly",
      pricing: "posted",
      feeFraction: 0.1,
      startingCredits: cfg.STARTING_CREDITS,
      marketReserve: cfg.MARKET_RESERVE,
    }),
  );
  // Among the market's managers: its row stamped before it restores, so a manager taking over a
  // dead one and this one restarting under that name never both take the same rows (adopt.ts).
  market.managerId = cfg.MARKET_MANAGER_ID;
  const managers = new Managers(db, {
    id: cfg.MARKET_MANAGER_ID,
    url: cfg.MARKET_MANAGER_URL ?? `http://${cfg.MARKET_HOST}:${cfg.MARKET_PORT}`,
    healthUrl: cfg.MARKET_HEALTH_PORT ? `http://${cfg.MARKET_HOST}:${cfg.MARKET_HEALTH_PORT}/healthz` : null,
    timeoutMs: cfg.MARKET_MANAGER_TIMEOUT_MS,
    capacity: cfg.MARKET_MANAGER_CAPACITY,
  });
  market.managers = managers;
  await managers.join();
  await managers.takeUnowned();
  const stopBeat = startManagerBeat(market, options.onTakenOver ?? (() => process.exit(3)));
  await restoreMarket(market);
  managers.ready = true;
  opsOf(market).restored = true;
  const services: Services = { config: cfg, database: connections, db, auth, market, clock: systemClock, log, quotas: createQuotas(cfg, systemClock), tokens: new TokenCache(db), sessions: new SessionCache(), modules: new ModuleDownloads(db) };
  const admin = await ensureAdmin(services);
  if (cfg.LOCAL_WORKER_TOKEN_FILE) await ensureLocalWorkerToken(services, cfg.LOCAL_WORKER_TOKEN_FILE);
  const stopSweeper = startSweeper(market, 1000);
  const stopSampler = startSampler(market, cfg.HISTORY_SAMPLE_MS);
  const server = createServer(services);
  let health: HealthThread | null = null;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ port: cfg.MARKET_PORT, host: cfg.MARKET_HOST, backlog: LISTEN_BACKLOG }, resolve);
    });
    if (cfg.MARKET_HEALTH_PORT !== undefined) {
      health = await startHealthThread({
        port: cfg.MARKET_HEALTH_PORT,
        host: cfg.MARKET_HOST,
        stallMs: cfg.MARKET_HEALTH_STALL_SECONDS * 1000,
        machines: () => market.state.machines.size,
        onError: (e) => log(`the health thread failed: ${e.message}`, { level: "error" }),
      }).catch((e: unknown) => {
        throw isAddressInUse(e) ? new PortTakenError(cfg.MARKET_HEALTH_PORT!, "MARKET_HEALTH_PORT") : e;
      });
    }
  } catch (e) {
    stopBeat();
    stopSweeper();
    stopSampler();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    closeIntake(market);
    await connections.close();
    await database.stop();
    throw isAddressInUse(e) ? new PortTakenError(cfg.MARKET_PORT, "MARKET_PORT") : e;
  }
  const port = (server.address() as AddressInfo).port;
  // A port chosen by the system (0, in tests) is known only now.
  if (!cfg.MARKET_MANAGER_URL && cfg.MARKET_PORT === 0) await managers.moved(`http://${cfg.MARKET_HOST}:${port}`, health ? `http://${cfg.MARKET_HOST}:${health.port}/healthz` : null);
  return {
    port,
    healthPort: health?.port ?? null,
    services,
    admin,
    async stop() {
      stopBeat();
      await health?.stop();
      stopSweeper();
      await stopSampler();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await market.serial(async () => {});
      await market.liveness.flush().catch(() => {});
      await services.tokens.close();
      closeIntake(market);
      await connections.close();
      await database.stop();
    },
  };
}

/** The first user of an empty market is its admin; the password is shown once, at this start. */
async function ensureAdmin(services: Services) {
  if ((await services.db.user.count()) > 0) return null;
  const email = ADMIN_EMAIL;
  const password = randomBytes(12).toString("base64url");
  const { user } = await services.auth.api.signUpEmail({ body: { email, password, name: "Market admin" } });
  await services.db.user.update({ where: { id: user.id }, data: { roles: ["admin", "consumer", "producer"], rolesChosenAt: new Date(), emailVerified: true } });
  return { email, password };
}

/**
 * The launcher's local Node worker sells this machine's cycles as a producer of its own; its
 * token is kept in a file beside the data and made again if the database no longer knows it.
 */
async function ensureLocalWorkerToken(services: Services, file: string) {
  if (existsSync(file) && (await userForToken(services.db, readFileSync(file, "utf8").trim()))) return;
  const email = LOCAL_WORKER_EMAIL;
  const user =
    (await services.db.user.findUnique({ where: { email } })) ??
    (await services.auth.api.signUpEmail({ body: { email, password: randomBytes(18).toString("base64url"), name: "Local worker" } })).user;
  // The operator's own machine has standing: its address is the market's, nothing to confirm.
  await services.db.user.update({ where: { id: user.id }, data: { roles: ["producer"], emailVerified: true } });
  const { token } = await createApiToken(services.db, user.id, "local worker");
  writeFileSync(file, token, { mode: 0o600 });
}
