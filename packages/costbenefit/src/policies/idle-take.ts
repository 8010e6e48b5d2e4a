// An idle slot takes queued work (DESIGN.md "Rebalancing"): when a machine asks for work and its
// own queue is empty while other machines hold queued, unstarted tasks, may it take one of them?
// The engine answers, with the reason the market records; the service only picks which tasks, in
// the order the rule allows (the back of the longest queue first).
import type { Reason } from "../reasons.ts";

export interface TakeInput {
  /** The machine asking, and the one whose queue holds the task: their owners' asks, credits per second. */
  takerPricePerSecond: number;
  holderPricePerSecond: number;
  /** The holder may never run this copy itself: its owner ran or runs another copy of the task. */
  holderMayNotRun: boolean;
}

/**
 * A copy its own machine may never run is anyone's to take (otherwise it would wait there after
 * other owners connect). Any other queued task only if the taker asks no more per second than the
 * holder: an expensive machine taking work placed on a cheap one would raise the job's cost and be
 * paid its own price for it. Per second, not per unit of work: benchmarks of equal machines differ
 * a little, and equal asks should share work.
 */
export function idleTake(i: TakeInput): { take: boolean; reason: Reason } {
  if (i.holderMayNotRun) return { take: true, reason: { code: "idle-take", why: "holder-may-not-run", takerPricePerSecond: i.takerPricePerSecond, holderPricePerSecond: i.holderPricePerSecond } };
  const take = i.takerPricePerSecond <= i.holderPricePerSecond;
  return { take, reason: { code: "idle-take", why: take ? "no-dearer" : "dearer", takerPricePerSecond: i.takerPricePerSecond, holderPricePerSecond: i.holderPricePerSecond } };
}
