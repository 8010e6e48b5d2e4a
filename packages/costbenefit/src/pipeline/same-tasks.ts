// cheapestMachine for a run of identical tasks (one job's tasks share their work, memory and
// bytes), giving the same answer for each task at the cost of a tree update and a few lookups
// instead of a walk over the machines. For a task of one shape the threshold walk always visits
// machines in the same order, with the same bound before each: only the costs of the machines
// visited change, and placing a task changes the cost of its machine alone. So the walk is made
// once, with every machine's cost; each task's answer is the cheapest (then lowest row) of the
// prefix the walk would have visited: it stops at the first position whose bound reaches the
// cheapest cost seen before it (bounds only rise, that cheapest only falls, so a binary search
// finds it) or once maxCandidatesPerTask machines were inspected.
import type { Exclusions } from "../reasons.ts";
import type { SearchContext } from "./context.ts";
import { infeasibility, type Estimate, type Exclusion, type TaskShape } from "./feasibility.ts";
import { Frontier } from "./frontier.ts";
import { machineCredits } from "./scoring.ts";
import type { Choice } from "./selection.ts";

/** Below this many tasks of one shape, walking the machines for each task costs less. */
export const SAME_TASKS_AT_LEAST = 32;

const byWork = new Frontier();
const byMemory = new Frontier();

export class SameTaskSearch {
  private readonly rows: number[] = [];
  private readonly bound: number[] = [];
  /** Machines inspected before each position (a machine met again is not inspected again). */
  private readonly inspectedBefore: number[] = [];
  private readonly posOfRow = new Map<number, number>();
  private readonly cost: Float64Array;
  private readonly finishAt: Float64Array;
  private readonly startsNow: Uint8Array;
  private readonly exclusion: (Exclusion | undefined)[];
  /** Positions the walk may reach before the candidate limit stops it. */
  private readonly end: number;
  /** A segment tree of positions: each node holds the cheapest (then lowest row) of its range, or -1. */
  private readonly tree: Int32Array;
  private readonly leaves: number;
  /** Set when a cost is not a finite number: the caller falls back to the walk. */
  unsafe = false;

  constructor(private readonly ctx: SearchContext, private readonly task: TaskShape, private readonly deadlineAt: number) {
    const state = ctx.state;
    const useMemory = task.memoryMb > 0;
    byWork.start(state.index);
    if (useMemory) byMemory.start(state.memoryIndex);
    const met = new Set<number>();
    let turn = 0;
    let inspected = 0;
    let end = -1;
    // The walk cheapestMachine makes, without stopping early: rows, bounds, repeats.
    for (;;) {
      if (byWork.empty || (useMemory && byMemory.empty)) break;
      const wTerm = byWork.peekKey() * ctx.pruneFactor * task.work;
      const mTerm = useMemory ? byMemory.peekKey() * task.memoryMb : 0;
      if (inspected >= ctx.maxCandidates) {
        end = this.rows.length;
        break;
      }
      const fromMemory = useMemory && (turn++ & 1) === 1;
      const row = fromMemory ? byMemory.next() : byWork.next();
      this.rows.push(met.has(row) ? -1 : row);
      this.bound.push(wTerm + mTerm);
      this.inspectedBefore.push(inspected);
      if (!met.has(row)) {
        met.add(row);
        this.posOfRow.set(row, this.rows.length - 1);
        inspected++;
      }
      if (!Number.isFinite(wTerm + mTerm)) this.unsafe = true;
    }
    const n = this.rows.length;
    this.end = end < 0 ? n : end;
    this.cost = new Float64Array(n);
    this.finishAt = new Float64Array(n);
    this.startsNow = new Uint8Array(n);
    this.exclusion = new Array(n);
    let leaves = 1;
    while (leaves < Math.max(1, n)) leaves *= 2;
    this.leaves = leaves;
    this.tree = new Int32Array(2 * leaves).fill(-1);
    for (let p = 0; p < n; p++) this.evaluate(p);
    for (let i = leaves - 1; i >= 1; i--) this.tree[i] = this.better(this.tree[2 * i]!, this.tree[2 * i + 1]!);
  }

  /** The machine cheapestMachine would choose now, or undefined with `why` as it would count. */
  choose(why: Exclusions): Choice | undefined {
    const end = this.end;
    // The first position whose bound reaches the cheapest cost before it; the walk stops there.
    let stop = end;
    if (end > 0 && this.cheapestIn(end) >= 0) {
      let lo = 1;
      let hi = end;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const c = this.cheapestIn(mid);
        if (c >= 0 && this.bound[mid]! >= this.cost[c]!) hi = mid;
        else lo = mid + 1;
      }
      stop = lo;
    }
    const best = this.cheapestIn(stop);
    if (best >= 0) return { row: this.rows[best]!, cost: this.cost[best]!, finishAt: this.finishAt[best]!, startsNow: this.startsNow[best] === 1 };
    // Nothing feasible: the walk went to its end and counted why for every machine it inspected.
    for (let p = 0; p < stop; p++) {
      if (this.rows[p]! < 0) continue;
      why.inspected++;
      const no = this.exclusion[p];
      if (no) why[no]++;
    }
    return undefined;
  }

  /** A task of this shape was placed on `row`: its cost changed, no other machine's did. */
  placed(row: number): void {
    const p = this.posOfRow.get(row);
    if (p === undefined) return;
    this.evaluate(p);
    for (let i = (p + this.leaves) >> 1; i >= 1; i >>= 1) this.tree[i] = this.better(this.tree[2 * i]!, this.tree[2 * i + 1]!);
  }

  private evaluate(p: number): void {
    const row = this.rows[p]!;
    const leaf = p + this.leaves;
    if (row < 0) return;
    const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
    const no = infeasibility(this.ctx, row, this.task, this.deadlineAt, undefined, est);
    this.exclusion[p] = no;
    if (no) {
      this.tree[leaf] = -1;
      return;
    }
    const cost = machineCredits(this.ctx, row, this.task, est.backlogSeconds);
    if (!Number.isFinite(cost)) this.unsafe = true;
    this.cost[p] = cost;
    this.finishAt[p] = est.finishAt;
    this.startsNow[p] = est.startsNow ? 1 : 0;
    this.tree[leaf] = p;
  }

  private better(a: number, b: number): number {
    if (a < 0) return b;
    if (b < 0) return a;
    const ca = this.cost[a]!;
    const cb = this.cost[b]!;
    return ca < cb || (ca === cb && this.rows[a]! < this.rows[b]!) ? a : b;
  }

  /** The cheapest (then lowest row) feasible position in [0, k), or -1. */
  private cheapestIn(k: number): number {
    let best = -1;
    let lo = this.leaves;
    let hi = k + this.leaves;
    while (lo < hi) {
      if (lo & 1) best = this.better(best, this.tree[lo++]!);
      if (hi & 1) best = this.better(best, this.tree[--hi]!);
      lo >>= 1;
      hi >>= 1;
    }
    return best;
  }
}
