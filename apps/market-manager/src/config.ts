import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { z } from "zod";

// The one module of the Market Manager that reads process.env.

const repoRoot = resolve(import.meta.dirname, "../../..");

export const Env = z.object({
  DATABASE_URL: z.string().startsWith("postgres", "DATABASE_URL must be a postgresql:// URL").optional(),
  MARKET_HOST: z.string().default("127.0.0.1"),
  MARKET_PORT: z.coerce.number().int().min(0).max(65535).default(4000), // 0: any free port (tests)
  /** When set, `/healthz` is also answered on this port by a thread of its own, at once under any load (http/health-thread.ts); 0: any free port. */
  MARKET_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** The health port answers 503 once the market's thread has not run for this long. */
  MARKET_HEALTH_STALL_SECONDS: z.coerce.number().min(1).max(3600).default(10),
  MARKET_DATA_DIR: z.string().default(join(repoRoot, ".data")),
  MARKET_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  /** "1": the embedded PostgreSQL records what each statement cost (pg_stat_statements): the benches' --statements. */
  MARKET_PG_STATEMENTS: z.enum(["0", "1"]).default("0"),
  /** "1": the embedded PostgreSQL's processes are scheduled as batch work, so its statements do not preempt the manager (db/batch-scheduling.ts); "0": as ordinary processes. */
  MARKET_PG_BATCH: z.enum(["0", "1"]).default("1"),
  PUBLIC_URL: z.string().url().default("http://localhost:3000"),
  BETTER_AUTH_SECRET: z.string().min(32).optional(),
  LEASE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  MAX_MODULE_BYTES: z.coerce.number().int().min(1024).default(8 * 1024 * 1024),
  /** When set, a token for the launcher's local Node worker is kept in this file. */
  LOCAL_WORKER_TOKEN_FILE: z.string().optional(),
  /** Defaults of the admin settings of the same names (credits); the stored settings win. */
  STARTING_CREDITS: z.coerce.number().min(0).max(1_000_000).default(100),
  MARKET_RESERVE: z.coerce.number().min(0).max(1e12).default(1_000_000),
  /** Sign-ups allowed from one client address, and from one network (/24, /48), per window. */
  SIGNUPS_PER_ADDRESS: z.coerce.number().int().min(1).default(5),
  SIGNUPS_PER_NETWORK: z.coerce.number().int().min(1).default(20),
  SIGNUP_WINDOW_MINUTES: z.coerce.number().min(1).default(60),
  /**
   * Proxies in front of the market (a TLS proxy), by address: the only peers whose X-Forwarded-For
   * and X-Forwarded-Proto are believed, by the web app and by the Market Manager. The Market
   * Manager also believes the web app on this host (127.0.0.1, ::1; http/client-address.ts).
   */
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((s) => s.split(",").map((a) => a.trim().replace(/^::ffff:/, "")).filter(Boolean)),
  // Limits and quotas (the README's table): each refusal names its limit and when to retry.
  AUTH_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(1_048_576).default(16 * 1024),
  /** Sign-in attempts per client address per minute (the auth library's limiter, in PostgreSQL). */
  SIGNINS_PER_MINUTE: z.coerce.number().int().min(1).default(5),
  /** Any other auth request per client address per minute. */
  AUTH_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  API_MAX_BATCH_CALLS: z.coerce.number().int().min(1).max(1000).default(20),
  QUOTES_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  SUBMISSIONS_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  /** Tasks (copies included) of a user's jobs not finished yet, delayed ones included. */
  QUEUED_TASKS_PER_USER: z.coerce.number().int().min(1).default(50_000),
  STREAMS_PER_MACHINE: z.coerce.number().int().min(1).default(4),
  STREAMS_PER_USER: z.coerce.number().int().min(1).default(32),
  /**
   * This Market Manager's name among the market's managers (docs/SCALING.md, "Several managers"):
   * the machines and jobs it holds name it, and a restart under the same name takes back what is
   * still its own.
   */
  MARKET_MANAGER_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, "MARKET_MANAGER_ID is 1 to 64 letters, digits, dots, dashes or underscores")
    .default("manager-1"),
  /** Where workers and the other managers reach this manager's API; http://MARKET_HOST:MARKET_PORT unless set. */
  MARKET_MANAGER_URL: z.string().url().optional(),
  /** A manager that has not stamped its row in PostgreSQL for this long is dead: another takes over its machines and jobs. */
  MARKET_MANAGER_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  /** The machines this manager is sized for: registrations go to the manager with the most room left. */
  MARKET_MANAGER_CAPACITY: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /**
   * How long a quote waits for the other managers' offers (market/shopping.ts): a manager that has
   * not answered by then is left out of that quote, so a slow or dying one delays it by this at most.
   */
  MARKET_QUOTE_SHOP_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(1500),
  /** "0": the database is migrated already (the launcher of several managers did it once, before starting them). */
  MARKET_MIGRATE: z.enum(["0", "1"]).default("1"),
  /**
   * "1": every producer account has standing, as in a closed market of known producers (their
   * results are accepted without added copies or spot checks); "0" (default): an open market,
   * where standing is earned (docs/DESIGN.md "Standing").
   */
  TRUST_ALL_PRODUCERS: z.enum(["0", "1"]).default("0"),
  LOG_LEVEL: z.enum(["silent", "info", "debug"]).default("info"),
  // How often the market's vital signs are written to its history (README "History").
  HISTORY_SAMPLE_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
});
export type Env = z.infer<typeof Env>;

export interface Config extends Env {
  authSecret: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment for the Market Manager:\n${lines.join("\n")}`);
  }
  const cfg = parsed.data;
  return { ...cfg, authSecret: cfg.BETTER_AUTH_SECRET ?? persistentSecret(cfg.MARKET_DATA_DIR) };
}

// A secret made on the first start and kept beside the data, so sessions survive restarts.
function persistentSecret(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
