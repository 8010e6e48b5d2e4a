// Stage 3: the cheapest feasible machine for one task, found by walking the cost index
// best-first. A machine's key times the task's work is a lower bound of its exact cost (convexity
// of n^x), so the walk stops as soon as that bound reaches the best exact cost found.
import type { SearchContext } from "./context.ts";
import { infeasibility, type Estimate, type TaskShape } from "./feasibility.ts";
import { machineCredits } from "./scoring.ts";
import type { Exclusions } from "../reasons.ts";
import type { CostIndex } from "../state/cost-index.ts";

export interface Choice {
  slot: number;
  /** Credits on this machine, without the link's share. */
  cost: number;
  finishAt: number;
  startsNow: boolean;
}

// Scratch frontier for the walk, reused across calls: no allocation per inspected machine.
// It is a min-heap of positions in the index heap, ordered by key as the index itself.
let frontier = new Int32Array(256);
let frontierKey = new Float64Array(256);
let fsize = 0;

function push(idx: CostIndex, p: number): void {
  if (p >= idx.size) return;
  if (fsize === frontier.length) {
    const a = new Int32Array(fsize * 2);
    a.set(frontier);
    frontier = a;
    const b = new Float64Array(fsize * 2);
    b.set(frontierKey);
    frontierKey = b;
  }
  const k = idx.keys[idx.heap[p]!]!;
  let i = fsize++;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const pk = frontierKey[parent]!;
    if (pk <= k) break;
    frontier[i] = frontier[parent]!;
    frontierKey[i] = pk;
    i = parent;
  }
  frontier[i] = p;
  frontierKey[i] = k;
}

function pop(): number {
  const top = frontier[0]!;
  const lastP = frontier[--fsize]!;
  const lastK = frontierKey[fsize]!;
  let i = 0;
  for (;;) {
    let c = 2 * i + 1;
    if (c >= fsize) break;
    if (c + 1 < fsize && frontierKey[c + 1]! < frontierKey[c]!) c++;
    if (frontierKey[c]! >= lastK) break;
    frontier[i] = frontier[c]!;
    frontierKey[i] = frontierKey[c]!;
    i = c;
  }
  frontier[i] = lastP;
  frontierKey[i] = lastK;
  return top;
}

export function emptyExclusions(): Exclusions {
  return { inspected: 0, memory: 0, reputation: 0, replica: 0, departure: 0, deadline: 0, horizon: 0, memoryFull: 0 };
}

export function cheapestMachine(
  ctx: SearchContext,
  task: TaskShape,
  deadlineAt: number,
  excluded: ReadonlySet<number> | undefined,
  why: Exclusions,
): Choice | undefined {
  const idx = ctx.state.index;
  if (idx.size === 0) return undefined;
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  let best: Choice | undefined;
  fsize = 0;
  push(idx, 0);
  while (fsize > 0) {
    const lowerBound = frontierKey[0]! * ctx.pruneFactor * task.work;
    if (best && lowerBound >= best.cost) break;
    if (why.inspected >= ctx.maxCandidates) break;
    const p = pop();
    push(idx, 2 * p + 1);
    push(idx, 2 * p + 2);
    const slot = idx.heap[p]!;
    why.inspected++;
    const no = infeasibility(ctx, slot, task, deadlineAt, excluded, est);
    if (no) {
      why[no]++;
      continue;
    }
    const cost = machineCredits(ctx, slot, task, est.backlogSeconds);
    if (!best || cost < best.cost || (cost === best.cost && slot < best.slot)) {
      best = { slot, cost, finishAt: est.finishAt, startsNow: est.startsNow };
    }
  }
  return best;
}
