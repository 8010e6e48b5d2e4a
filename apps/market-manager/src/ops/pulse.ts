import type { Market } from "../market/market.ts";

/**
 * The market's figures of the moment, read from memory only (no database, no lock): cheap enough
 * to send every admin dashboard once a second however many machines there are.
 */
export function marketPulse(market: Market, now: number) {
  let machines = 0;
  let slots = 0;
  let running = 0;
  let queued = 0;
  for (const m of market.state.machines.values()) {
    machines += 1;
    slots += m.slots;
    running += m.leases.size;
    queued += m.queue.length;
  }
  let delayed = 0;
  for (const j of market.state.jobs.values()) if (j.status === "delayed") delayed += 1;
  return {
    at: now,
    machines,
    slots,
    running,
    queued,
    utilisation: slots > 0 ? running / slots : 0,
    jobs: market.state.jobs.size,
    delayed,
    streams: market.events.listenerCount("event"),
  };
}
export type MarketPulse = ReturnType<typeof marketPulse>;
