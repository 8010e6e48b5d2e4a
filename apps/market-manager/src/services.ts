import type { Config } from "./config.ts";
import type { Database, Db } from "./db/client.ts";
import type { Auth } from "./auth/auth.ts";
import type { Market } from "./market/market.ts";
import type { Quotas } from "./limits/quotas.ts";
import type { TokenCache } from "./auth/tokens.ts";
import type { SessionCache } from "./auth/session-cache.ts";
import type { Caller } from "./api/trpc.ts";
import type { ModuleDownloads } from "./tasks/module-downloads.ts";

import type { Clock } from "./clock.ts";
import type { Log } from "./log.ts";

// Clock and Log have files of their own, so that the modules Services names can use them
// without depending on this file (and it on them: a type cycle).
export { systemClock, type Clock } from "./clock.ts";
export type { Log, LogFields } from "./log.ts";

/** Everything a handler may depend on, passed in rather than imported. */
export interface Services {
  config: Config;
  /** The market's ways to its database (db/client.ts Database): `reads` for the pages' prepared reads. */
  database: Database;
  /** Prisma: database.db. */
  db: Db;
  auth: Auth;
  market: Market;
  clock: Clock;
  log: Log;
  quotas: Quotas;
  /** API tokens answered from memory (auth/tokens.ts). */
  tokens: TokenCache;
  /** Browser sessions' callers answered from memory for a few seconds (auth/session-cache.ts). */
  sessions: SessionCache<Caller>;
  /** Stored programs as workers fetch them, the recent ones from memory (tasks/module-downloads.ts). */
  modules: ModuleDownloads;
}
