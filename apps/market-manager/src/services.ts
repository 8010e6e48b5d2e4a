import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Auth } from "./auth/auth.ts";
import type { Market } from "./market/market.ts";
import type { Quotas } from "./limits/quotas.ts";
import type { TokenCache } from "./auth/tokens.ts";

export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

export type Log = (line: string) => void;

/** Everything a handler may depend on, passed in rather than imported. */
export interface Services {
  config: Config;
  db: Db;
  auth: Auth;
  market: Market;
  clock: Clock;
  log: Log;
  quotas: Quotas;
  /** API tokens answered from memory (auth/tokens.ts). */
  tokens: TokenCache;
}
