// Proportional share by bids on each machine (the Millennium paper's rates, the Tycoon paper's b/t): a machine's
// price is the sum of the bids of the tasks on it; a task that finds a free slot has it to itself,
// otherwise it gets slots x bid / (bid + price) of the machine, at most one slot. The two
// market-based policies place each task where that share buys the most progress (the Millennium paper's
// lowest-price node, the Tycoon paper's best response).
import type { Chooser } from "../pipeline/plan.ts";
import { infeasibility, type Estimate } from "../pipeline/feasibility.ts";
import { machineCredits } from "../pipeline/scoring.ts";
import type { MarketState } from "../state/market-state.ts";
import type { ShareCall } from "./share.ts";

const TINY = 1e-12;

/** Sum of the bids of the tasks on each machine (indexed by machine row). */
export function hostSums(call: ShareCall, bidOf: (jobId: string) => number): Float64Array {
  const out = new Float64Array(call.state.machines.end);
  const memo = new Map<string, number>();
  for (const t of call.state.tasks.values()) {
    let b = memo.get(t.jobId);
    if (b === undefined) memo.set(t.jobId, (b = bidOf(t.jobId)));
    out[t.machine]! += b;
  }
  return out;
}

export interface Share {
  /** Fraction of one slot the task gets. */
  share: number;
  /** Work units per second it progresses at. */
  progress: number;
  /** It has a slot to itself (no contention). */
  alone: boolean;
}

/** The share a bid of `bid` gets on machine s with `others` bid there by `busy` tasks. */
export function shareOn(state: MarketState, s: number, bid: number, others: number, busy: number): Share {
  const f = state.machines.f;
  const slots = f.slots[s]!;
  if (busy < slots) return { share: 1, progress: f.speed[s]!, alone: true };
  const b = Math.max(bid, TINY);
  const share = Math.min(1, (slots * b) / (b + Math.max(0, others)));
  return { share, progress: f.speed[s]! * share, alone: false };
}

export interface Chosen extends Share {
  taskId: string;
  work: number;
  /** The machine's price (sum of bids) before this task joined. */
  price: number;
}

/**
 * The machine where the task progresses fastest with its bid (ties: the lower price, then the
 * earlier finish). Each choice adds the bid to that machine's price, so the tasks of one job
 * spread. `picked` receives every choice.
 */
export function progressChooser(call: ShareCall, bid: number, sums: Float64Array, picked: Chosen[]): Chooser {
  return (ctx, task, deadlineAt, excluded, why) => {
    const m = ctx.state.machines;
    const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
    let best = -1;
    let bestShare: Share | undefined;
    let bestBacklog = 0;
    for (let s = 0; s < m.end; s++) {
      if (!m.live(s)) continue;
      why.inspected++;
      const no = infeasibility(ctx, s, task, deadlineAt, excluded, est);
      if (no) {
        why[no]++;
        continue;
      }
      const busy = m.i.running[s]! + m.i.queued[s]! + ctx.overlay.countOf(s);
      const sh = shareOn(ctx.state, s, bid, sums[s]!, busy);
      if (
        !bestShare ||
        sh.progress > bestShare.progress ||
        (sh.progress === bestShare.progress && sums[s]! < sums[best]!)
      ) {
        best = s;
        bestShare = sh;
        bestBacklog = est.backlogSeconds;
      }
    }
    if (best < 0 || !bestShare) return undefined;
    picked.push({ taskId: task.id, work: task.work, price: sums[best]!, ...bestShare });
    sums[best]! += bid;
    // Time-shared at its share from now (a free slot: at once, at full speed).
    const finishAt = call.now + task.work / bestShare.progress + task.bytes / m.f.bandwidth[best]!;
    return { row: best, cost: machineCredits(ctx, best, task, bestBacklog), finishAt, startsNow: bestShare.alone };
  };
}
