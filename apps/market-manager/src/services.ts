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

/** Fields beside a log line: its level (info unless said) and what it is about, such as the request id. */
export interface LogFields {
  level?: "debug" | "info" | "warn" | "error";
  requestId?: string;
  [field: string]: unknown;
}

/** The market's log (ops/log.ts writes it as JSON lines); plain `log("...")` calls are info lines. */
export type Log = (line: string, fields?: LogFields) => void;

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
