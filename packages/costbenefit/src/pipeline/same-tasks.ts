// cheapestMachine for a run of identical tasks (one job's tasks share their work, memory and
// bytes), giving the same answer for each task at the cost of a tree update and a few lookups
// instead of a search. For a task of one shape the search meets the machine tree's leaves in the
// same order, with the same bounds, whatever was placed before (tree-walk.ts; node bounds read the
// market, not the plan's tentative loads): only the costs of the machines met change, and placing
// a task changes the cost of its machine alone. So the walk is made once, with every machine's
// cost; each task's answer is the cheapest (then lowest row) of the prefix the search would have
// met: it stops at the first leaf whose bound (then lowest row) is above the cheapest machine met
// before it (bounds only rise, that cheapest only falls, so a binary search finds it) or once
// maxCandidatesPerTask machines were checked.
//
// The walk is made lazily, only as far as some task's answer needs: a prefix never changes when
// the walk goes further, and a machine first met later has no task of this run on it, so its cost
// then is what it would have been at the start. On a market whose machines differ the walk stops
// after a few leaves; on one whose machines all look alike every task of the run takes the next
// twin, and this search meets each of them once for the whole run.
//
// A run's tasks may differ in bytes when the plan has no deadline: bytes only move a task's finish
// (by its own bytes over the machine's bandwidth), never its cost or a bound, and with no deadline
// a finish rules a machine out only by its departure, so such a run's search gives up (the search
// per task answers) once it meets a machine that departs. When no machine can take a task, the
// search per task answers too, and counts why.
import type { Exclusions } from "../reasons.ts";
import type { SearchContext } from "./context.ts";
import { finishOf, infeasibility, type Estimate, type TaskShape } from "./feasibility.ts";
import { NodeBound } from "./node-bound.ts";
import { machineCredits } from "./scoring.ts";
import { cheapestMachine, type Choice } from "./selection.ts";
import { TreeWalk } from "./tree-walk.ts";

/** Below this many tasks of one shape, each task searches the machines itself. */
export const SAME_TASKS_AT_LEAST = 2;

/** Machines the walk first meets; it then doubles whenever a task needs more. */
const FIRST_STEP = 16;

// The walk shared by every run's search: only the search made last may advance it.
const walk = new TreeWalk();
let walking: SameTaskSearch | undefined;

function grownF64(a: Float64Array, n: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

export class SameTaskSearch {
  /** Machines in the order the walk meets them (positions). */
  private readonly rows: number[] = [];
  private readonly posOfRow = new Map<number, number>();
  /** Each leaf met: its first position, its bound and its lowest row. */
  private readonly starts: number[] = [];
  private readonly startBound: number[] = [];
  private readonly startRow: number[] = [];
  private cost = new Float64Array(FIRST_STEP);
  private backlog = new Float64Array(FIRST_STEP);
  private startsNow = new Uint8Array(FIRST_STEP);
  /** Set once the walk has ended: the tree ran out, or the candidate limit stops it here. */
  private done = false;
  private readonly test: NodeBound;
  private readonly est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  /** A segment tree of positions: each node holds the cheapest (then lowest row) feasible one, or -1. */
  private tree = new Int32Array(2).fill(-1);
  private leaves = 1;
  /** Set when the run cannot be answered this way (a cost not a number, a departing machine met with bytes that vary): the caller asks per task. */
  unsafe = false;

  /** `bytesVary`: the run's tasks differ in bytes (only with no deadline, see above). */
  constructor(private readonly ctx: SearchContext, private readonly task: TaskShape, private readonly deadlineAt: number, private readonly bytesVary = false) {
    this.test = new NodeBound(ctx, task, deadlineAt);
    walking = this;
    walk.start(ctx.state.tree, this.test, undefined);
  }

  /** The machine cheapestMachine would choose now for `task` (of the run), or undefined with `why` as it would count; with `unsafe` set, ask it instead. */
  choose(task: TaskShape, why: Exclusions): Choice | undefined {
    let stop = this.stopWithin();
    while (stop === this.rows.length && !this.done && !this.unsafe) {
      this.extend(Math.max(FIRST_STEP, this.rows.length));
      stop = this.stopWithin();
    }
    if (this.unsafe) return undefined;
    const best = this.cheapestIn(stop);
    if (best >= 0) {
      const row = this.rows[best]!;
      const startsNow = this.startsNow[best] === 1;
      return { row, cost: this.cost[best]!, finishAt: finishOf(this.ctx, row, task, startsNow, this.backlog[best]!), startsNow };
    }
    // No machine: the search for this task alone says so, and counts why.
    return cheapestMachine(this.ctx, task, this.deadlineAt, undefined, why);
  }

  /** A task of this shape was placed on `row`: its cost changed, no other machine's did. */
  placed(row: number): void {
    const p = this.posOfRow.get(row);
    if (p === undefined) return;
    this.evaluate(p);
    this.up(p);
  }

  /**
   * Where the search stops in the walk made so far: the first leaf whose bound (then lowest row) is
   * above the cheapest machine before it, or the walk's length when none is yet.
   */
  private stopWithin(): number {
    const n = this.starts.length;
    if (n <= 1 || !this.stopsAt(n - 1)) return this.rows.length;
    let lo = 1;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.stopsAt(mid)) hi = mid;
      else lo = mid + 1;
    }
    return this.starts[lo]!;
  }

  private stopsAt(leaf: number): boolean {
    const c = this.cheapestIn(this.starts[leaf]!);
    if (c < 0) return false;
    const lb = this.startBound[leaf]!;
    const cost = this.cost[c]!;
    return lb > cost || (lb === cost && this.startRow[leaf]! > this.rows[c]!);
  }

  /** The walk's next leaves, until `count` more machines or its end, the candidate limit included. */
  private extend(count: number): void {
    // Another search moved the shared walk since: this one can no longer go on.
    if (walking !== this) {
      this.unsafe = true;
      return;
    }
    const ctx = this.ctx;
    const tree = ctx.state.tree;
    const departureAt = ctx.state.machines.f.departureAt;
    const from = this.rows.length;
    const limit = ctx.maxCandidates;
    while (this.rows.length - from < count) {
      if (this.rows.length >= limit) {
        this.done = true;
        break;
      }
      const v = walk.nextLeaf();
      if (this.bytesVary && this.test.departures) this.unsafe = true;
      if (v < 0) {
        this.done = true;
        break;
      }
      this.starts.push(this.rows.length);
      this.startBound.push(walk.leafBound);
      this.startRow.push(walk.leafRow);
      for (let row = tree.head(v); row >= 0; row = tree.next[row]!) {
        if (this.rows.length >= limit) {
          this.done = true;
          break;
        }
        if (this.bytesVary && departureAt[row] !== Infinity) this.unsafe = true;
        this.posOfRow.set(row, this.rows.length);
        this.rows.push(row);
      }
    }
    const n = this.rows.length;
    if (n > this.cost.length) {
      const size = Math.max(n, this.cost.length * 2);
      this.cost = grownF64(this.cost, size);
      this.backlog = grownF64(this.backlog, size);
      const s = new Uint8Array(size);
      s.set(this.startsNow);
      this.startsNow = s;
    }
    const feasible: boolean[] = [];
    for (let p = from; p < n; p++) feasible.push(this.evaluate(p));
    if (n > this.leaves) {
      // Regrown: every position goes into a tree twice as big or more.
      let leaves = this.leaves;
      while (leaves < n) leaves *= 2;
      const old = this.tree;
      const oldLeaves = this.leaves;
      this.leaves = leaves;
      this.tree = new Int32Array(2 * leaves).fill(-1);
      for (let p = 0; p < from; p++) this.tree[p + leaves] = old[p + oldLeaves]!;
      for (let p = from; p < n; p++) this.tree[p + leaves] = feasible[p - from] ? p : -1;
      for (let i = leaves - 1; i >= 1; i--) this.tree[i] = this.better(this.tree[2 * i]!, this.tree[2 * i + 1]!);
    } else {
      for (let p = from; p < n; p++) this.up(p);
    }
  }

  /** The position's cost, in its leaf of the tree once it has room for it; returns whether the machine can take the task. */
  private evaluate(p: number): boolean {
    const row = this.rows[p]!;
    const est = this.est;
    const no = infeasibility(this.ctx, row, this.task, this.deadlineAt, undefined, est);
    const ok = no === undefined;
    if (ok) {
      const cost = machineCredits(this.ctx, row, this.task, est.backlogSeconds);
      // A cost that is not a number orders nothing: the search per task answers.
      if (cost !== cost) this.unsafe = true;
      this.cost[p] = cost;
      this.backlog[p] = est.backlogSeconds;
      this.startsNow[p] = est.startsNow ? 1 : 0;
    }
    if (p < this.leaves) this.tree[p + this.leaves] = ok ? p : -1;
    return ok;
  }

  /** The tree's nodes above position `p`, after its leaf changed. */
  private up(p: number): void {
    for (let i = (p + this.leaves) >> 1; i >= 1; i >>= 1) this.tree[i] = this.better(this.tree[2 * i]!, this.tree[2 * i + 1]!);
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
