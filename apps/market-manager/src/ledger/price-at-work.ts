import type { WorkPrice } from "@cyclemarket/costbenefit";

/** The admitted plan's prices at multiples of its work, as its decision record keeps them (null without). */
export function priceAtWorkOf(decision: unknown): WorkPrice[] | null {
  const points = (decision as { priceAtWork?: unknown } | null)?.priceAtWork;
  return Array.isArray(points) && points.length ? (points as WorkPrice[]) : null;
}
