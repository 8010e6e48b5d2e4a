import type { Config } from "../config.ts";
import type { Clock } from "../clock.ts";
import { openCounter, windowCounter } from "./window.ts";

/** The per-user quotas of one Market Manager (the README's table of limits). */
export interface Quotas {
  quote: (userId: string) => number | null;
  submit: (userId: string) => number | null;
  userStreams: ReturnType<typeof openCounter>;
  machineStreams: ReturnType<typeof openCounter>;
}

export function createQuotas(cfg: Config, clock: Clock): Quotas {
  const now = () => clock.now();
  return {
    quote: windowCounter(cfg.QUOTES_PER_MINUTE, 60_000, now),
    submit: windowCounter(cfg.SUBMISSIONS_PER_MINUTE, 60_000, now),
    userStreams: openCounter(cfg.STREAMS_PER_USER),
    machineStreams: openCounter(cfg.STREAMS_PER_MACHINE),
  };
}
