import { priceAtRatio, type WorkPrice } from "@cyclemarket/costbenefit";
import type { LiveJob } from "../market/live.ts";

/**
 * What a job whose measured work contradicted its estimate is charged before the consumer's
 * maxSpend caps it: its admitted plan priced at the measured work (costbenefit priceAtRatio, read
 * from the points fixed at admission). Cost is convex in work, so a price scaled in proportion
 * would let an estimate declared too small pay less than the truth; in proportion only for a job
 * admitted before the points were kept.
 */
export function contradictedCharge(job: Pick<LiveJob, "declaredWorkPerTask" | "priceAtWork">, price: number, measured: number): number {
  const ratio = measured / Math.max(job.declaredWorkPerTask, 1e-9);
  return job.priceAtWork ? priceAtRatio(job.priceAtWork, ratio) : price * Math.max(1, ratio);
}

/** The admitted plan's prices at multiples of its work, as its decision record keeps them (null without). */
export function priceAtWorkOf(decision: unknown): WorkPrice[] | null {
  const points = (decision as { priceAtWork?: unknown } | null)?.priceAtWork;
  return Array.isArray(points) && points.length ? (points as WorkPrice[]) : null;
}
