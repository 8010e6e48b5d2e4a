import type { Market } from "../market/market.ts";
import { Metrics } from "./metrics.ts";

/**
 * What the market's operators see of one running market: its metrics and the counts of decisions
 * since the last history sample. Kept beside the market rather than inside it, so recording
 * stays a one-line call at the places where the market applies a decision.
 */
export interface Ops {
  metrics: Metrics;
  /** Admissions, delays and rejections since the sampler last took them. */
  interval: { admissions: number; delays: number; rejections: number };
  /** Set once the market was rebuilt from the database (readiness). */
  restored: boolean;
}

/** The market's Ops (market.resources), made on first use. */
export function opsOf(market: Market): Ops {
  let ops = market.resources.ops;
  if (!ops) {
    const metrics = new Metrics(market.state, market.resources.database.pool);
    ops = market.resources.ops = { metrics, interval: { admissions: 0, delays: 0, rejections: 0 }, restored: false };
    market.journal.observe = (kind, stage, seconds) => metrics.journal.observe({ kind, stage }, seconds);
  }
  return ops;
}

/** Counts and times a settlement (its ledger transaction's work) by how the job ended. */
export async function timedSettlement<T>(market: Market, outcome: string, settle: () => Promise<T>): Promise<T> {
  const { metrics } = opsOf(market);
  const end = metrics.settlementSeconds.startTimer();
  const out = await settle();
  end();
  metrics.settlements.inc({ outcome });
  return out;
}
