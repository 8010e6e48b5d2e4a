// Stage 3: the cheapest feasible machine for one task. Two sorted lists are walked together
// (the threshold algorithm): machines by linearized compute + payment cost per work unit, and by
// linearized memory cost per MB. By convexity of n^x, work x the first key plus memory x the
// second is a lower bound of a machine's exact cost, so once that bound for the machines not yet
// seen reaches the best exact cost found, no unseen machine can be cheaper.
import type { SearchContext } from "./context.ts";
import { infeasibility, type Estimate, type TaskShape } from "./feasibility.ts";
import { Frontier } from "./frontier.ts";
import { machineCredits } from "./scoring.ts";
import type { Exclusions } from "../reasons.ts";

export interface Choice {
  row: number;
  /** Credits on this machine, without the link's share. */
  cost: number;
  finishAt: number;
  startsNow: boolean;
}

const byWork = new Frontier();
const byMemory = new Frontier();
let seen = new Int32Array(1024);
let stamp = 0;

export function emptyExclusions(): Exclusions {
  return { inspected: 0, unavailable: 0, memory: 0, reputation: 0, replica: 0, departure: 0, deadline: 0, horizon: 0, memoryFull: 0 };
}

/** Every count back to zero (one tally reused across a plan's tasks). */
export function clearExclusions(why: Exclusions): void {
  why.inspected = why.unavailable = why.memory = why.reputation = why.replica = why.departure = why.deadline = why.horizon = why.memoryFull = 0;
}

export function cheapestMachine(
  ctx: SearchContext,
  task: TaskShape,
  deadlineAt: number,
  excluded: ReadonlySet<number> | undefined,
  why: Exclusions,
): Choice | undefined {
  const state = ctx.state;
  if (state.index.size === 0) return undefined;
  if (seen.length < state.index.keys.length) seen = new Int32Array(state.index.keys.length);
  if (++stamp === 0x7fffffff) {
    seen.fill(0);
    stamp = 1;
  }
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  const useMemory = task.memoryMb > 0;
  byWork.start(state.index);
  if (useMemory) byMemory.start(state.memoryIndex);
  let best: Choice | undefined;
  let turn = 0;
  for (;;) {
    // Each list holds every machine: once either is exhausted, every machine has been seen.
    if (byWork.empty || (useMemory && byMemory.empty)) break;
    // Keys of the work list may have drained since the index was built: scale them down.
    const wTerm = byWork.peekKey() * ctx.pruneFactor * task.work;
    const mTerm = useMemory ? byMemory.peekKey() * task.memoryMb : 0;
    if (best && wTerm + mTerm >= best.cost) break;
    if (why.inspected >= ctx.maxCandidates) break;
    // Alternate between the lists (the threshold algorithm's round robin; advancing the list
    // that dominates the bound was measured slower: it keeps walking large-memory machines).
    const fromMemory = useMemory && (turn++ & 1) === 1;
    const row = fromMemory ? byMemory.next() : byWork.next();
    if (seen[row] === stamp) continue;
    seen[row] = stamp;
    why.inspected++;
    const no = infeasibility(ctx, row, task, deadlineAt, excluded, est);
    if (no) {
      why[no]++;
      continue;
    }
    const cost = machineCredits(ctx, row, task, est.backlogSeconds);
    if (!best || cost < best.cost || (cost === best.cost && row < best.row)) {
      best = { row, cost, finishAt: est.finishAt, startsNow: est.startsNow };
    }
  }
  return best;
}
