// Stage 3: the cheapest feasible machine for one task, ties to the lowest row. The machine tree's
// nodes are met in increasing order of their lower bound (tree-walk.ts); a leaf's machines are
// checked and costed one by one, and the walk stops once the next node's bound (then lowest row)
// is above the best machine found: no machine under it or after it can be cheaper. Exact, whatever
// the tree's shape: the shape only decides how soon the bounds stop the walk.
import type { SearchContext } from "./context.ts";
import { infeasibility, type Estimate, type TaskShape } from "./feasibility.ts";
import { NodeBound } from "./node-bound.ts";
import { machineCredits } from "./scoring.ts";
import { TreeWalk } from "./tree-walk.ts";
import type { Exclusions } from "../reasons.ts";

export interface Choice {
  row: number;
  /** Credits on this machine, without the link's share. */
  cost: number;
  finishAt: number;
  startsNow: boolean;
}

const walk = new TreeWalk();

export function emptyExclusions(): Exclusions {
  return { inspected: 0, unavailable: 0, memory: 0, reputation: 0, replica: 0, departure: 0, deadline: 0, horizon: 0, memoryFull: 0 };
}

/** Every count back to zero (one tally reused across a plan's tasks). */
export function clearExclusions(why: Exclusions): void {
  why.inspected = why.unavailable = why.memory = why.reputation = why.replica = why.departure = why.deadline = why.horizon = why.memoryFull = 0;
}

/**
 * `why` counts the machines ruled out: those checked one by one (`inspected`) under the first check
 * each failed, and whole nodes of the tree under the check that ruled out all of their available
 * machines. At most `maxCandidatesPerTask` machines are checked one by one; past that the best
 * found is the answer.
 */
export function cheapestMachine(
  ctx: SearchContext,
  task: TaskShape,
  deadlineAt: number,
  excluded: ReadonlySet<number> | undefined,
  why: Exclusions,
): Choice | undefined {
  const tree = ctx.state.tree;
  const next = tree.next;
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  walk.start(tree, new NodeBound(ctx, task, deadlineAt), why);
  let best: Choice | undefined;
  let checked = 0;
  const limit = ctx.maxCandidates;
  while (!walk.empty && checked < limit) {
    if (best) {
      const lb = walk.topBound;
      if (lb > best.cost || (lb === best.cost && walk.topRow > best.row)) break;
    }
    const v = walk.pop();
    if (!tree.isLeaf(v)) continue;
    for (let row = tree.head(v); row >= 0 && checked < limit; row = next[row]!) {
      checked++;
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
  }
  return best;
}
