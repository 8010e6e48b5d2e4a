// An idle slot takes queued work (docs/DESIGN.md "Rebalancing"): when a machine asks for work and its
// own queue is empty while other machines hold queued, unstarted tasks, may it take one of them?
// The engine answers, with the reason the market records, and says where to look: which holders'
// queues first (idleTakeOrder) and which of their tasks are spare (spareFrom); the service only
// reads the tasks at those places.
import type { Reason } from "../reasons.ts";

export interface TakeInput {
  /** The machine asking, and the one whose queue holds the task: their asks, credits per reference second of work. */
  takerAsk: number;
  holderAsk: number;
  /** The holder may never run this copy itself: its owner ran or runs another copy of the task. */
  holderMayNotRun: boolean;
}

/**
 * How much more per unit of work a taker may ask than the holder. Machines of one price per second
 * measure slightly different speeds, so their asks per reference second differ by a little: without
 * room, of two alike machines only one could ever help the other. The difference is at most the
 * share of a quote the market's default fee adds, and every lease is still checked against its
 * job's escrow.
 */
export const IDLE_TAKE_SLACK = 0.1;

/**
 * A copy its own machine may never run is anyone's to take (otherwise it would wait there after
 * other owners connect). Any other queued task only if the taker asks at most IDLE_TAKE_SLACK more
 * per unit of work than the holder: each lease pays its machine's ask times the task's work, so a
 * dearer machine taking work placed on a cheaper one would spend more of the job's escrow than its
 * price planned.
 */
export function idleTake(i: TakeInput): { take: boolean; reason: Reason } {
  if (i.holderMayNotRun) return { take: true, reason: { code: "idle-take", why: "holder-may-not-run", takerAsk: i.takerAsk, holderAsk: i.holderAsk } };
  const take = i.takerAsk <= i.holderAsk * (1 + IDLE_TAKE_SLACK);
  return { take, reason: { code: "idle-take", why: take ? "no-dearer" : "dearer", takerAsk: i.takerAsk, holderAsk: i.holderAsk } };
}

/** A machine holding queued tasks, as an idle machine looking for work sees it. */
export interface Holder {
  queueLength: number;
  /** Slots the holder offers now (its controls applied), and leases it runs. */
  offeredSlots: number;
  leasesRunning: number;
}

/** The holders an idle machine looks at, in order: the most queued work per offered slot first. */
export function idleTakeOrder<H extends Holder>(holders: readonly H[]): H[] {
  const load = (h: H) => h.queueLength / Math.max(1, h.offeredSlots);
  return holders.filter((h) => h.queueLength > 0).sort((a, b) => load(b) - load(a));
}

/**
 * Where a holder's spare tasks start in its queue: the first ones are what its own free slots
 * take next, so an idle machine takes from the back, beyond them.
 */
export function spareFrom(h: Holder): number {
  return Math.max(0, h.offeredSlots - h.leasesRunning);
}

/** Queued tasks a holder cannot start itself right now, beyond what its own free slots take next: what idle machines may take. */
export function spareTasks(h: Holder): number {
  return Math.max(0, h.queueLength - spareFrom(h));
}
