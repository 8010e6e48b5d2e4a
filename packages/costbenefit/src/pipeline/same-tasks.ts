// cheapestMachine for a run of identical tasks (one job's tasks share their work, memory and
// bytes), giving the same answer for each task at the cost of a tree update and a few lookups
// instead of a walk over the machines. For a task of one shape the threshold walk always visits
// machines in the same order, with the same bound before each: only the costs of the machines
// visited change, and placing a task changes the cost of its machine alone. So the walk is made
// once, with every machine's cost; each task's answer is the cheapest (then lowest row) of the
// prefix the walk would have visited: it stops at the first position whose bound reaches the
// cheapest cost seen before it (bounds only rise, that cheapest only falls, so a binary search
// finds it) or once maxCandidatesPerTask machines were inspected.
//
// The walk is made lazily, only as far as some task's answer needs: a prefix's positions never
// change when the walk goes further, and a machine first met later has no task of this run on it,
// so its cost then is what it would have been at the start. On a market whose machines differ the
// walk stops after a few machines; on one whose machines all look alike (their bounds tie, and a
// bound never reaches an exact cost) every task's walk meets every machine, and this search meets
// each of them once for the whole run instead of once per task.
//
// A run's tasks may differ in bytes when the plan has no deadline: bytes only move a task's finish
// (by its own bytes over the machine's bandwidth), never its cost or the walk's bounds, and with
// no deadline a finish rules a machine out only by its departure, so such a run's search gives up
// (the walk answers) once it meets a machine that departs.
import type { Exclusions } from "../reasons.ts";
import type { SearchContext } from "./context.ts";
import { finishOf, infeasibility, type Estimate, type Exclusion, type TaskShape } from "./feasibility.ts";
import { Frontier } from "./frontier.ts";
import { machineCredits } from "./scoring.ts";
import type { Choice } from "./selection.ts";

/** Below this many tasks of one shape, each task walks the machines itself. */
export const SAME_TASKS_AT_LEAST = 2;

/** Positions the walk first makes; it then doubles whenever a task needs more. */
const FIRST_STEP = 16;

// The walk's two lists, shared by every search: only the search made last may advance them.
const byWork = new Frontier();
const byMemory = new Frontier();
let walking: SameTaskSearch | undefined;

function grownF64(a: Float64Array, n: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

export class SameTaskSearch {
  private readonly rows: number[] = [];
  private readonly bound: number[] = [];
  private readonly posOfRow = new Map<number, number>();
  private cost = new Float64Array(FIRST_STEP);
  private backlog = new Float64Array(FIRST_STEP);
  private startsNow = new Uint8Array(FIRST_STEP);
  private readonly exclusion: (Exclusion | undefined)[] = [];
  /** Set once the walk has ended: the lists ran out, or the candidate limit stops it here. */
  private done = false;
  private turn = 0;
  private inspected = 0;
  private readonly useMemory: boolean;
  private readonly est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  /** A segment tree of positions: each node holds the cheapest (then lowest row) of its range, or -1. */
  private tree = new Int32Array(2).fill(-1);
  private leaves = 1;
  /** Set when a cost or bound is not a finite number: the caller falls back to the walk. */
  unsafe = false;

  /** `bytesVary`: the run's tasks differ in bytes (only with no deadline, see above). */
  constructor(private readonly ctx: SearchContext, private readonly task: TaskShape, private readonly deadlineAt: number, private readonly bytesVary = false) {
    this.useMemory = task.memoryMb > 0;
    walking = this;
    byWork.start(ctx.state.index);
    if (this.useMemory) byMemory.start(ctx.state.memoryIndex);
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
    this.up(p);
  }

  /**
   * The first position of the walk made so far whose bound reaches the cheapest cost before it
   * (the walk stops there), or the walk's length when none does yet.
   */
  private stopWithin(): number {
    const n = this.rows.length;
    if (n <= 1 || this.cheapestIn(n - 1) < 0 || this.bound[n - 1]! < this.cost[this.cheapestIn(n - 1)]!) return n;
    let lo = 1;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.cheapestIn(mid);
      if (c >= 0 && this.bound[mid]! >= this.cost[c]!) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Up to `count` more positions of the walk cheapestMachine makes, without stopping early: rows, bounds, repeats. */
  private extend(count: number): void {
    // Another search moved the shared lists since: this one can no longer go on.
    if (walking !== this) {
      this.unsafe = true;
      return;
    }
    const ctx = this.ctx;
    const task = this.task;
    const useMemory = this.useMemory;
    const from = this.rows.length;
    for (let k = 0; k < count; k++) {
      if (byWork.empty || (useMemory && byMemory.empty)) {
        this.done = true;
        break;
      }
      const wTerm = byWork.peekKey() * ctx.pruneFactor * task.work;
      const mTerm = useMemory ? byMemory.peekKey() * task.memoryMb : 0;
      if (this.inspected >= ctx.maxCandidates) {
        this.done = true;
        break;
      }
      const fromMemory = useMemory && (this.turn++ & 1) === 1;
      const row = fromMemory ? byMemory.next() : byWork.next();
      const met = this.posOfRow.has(row);
      this.rows.push(met ? -1 : row);
      this.bound.push(wTerm + mTerm);
      if (!met) {
        this.posOfRow.set(row, this.rows.length - 1);
        this.inspected++;
        if (this.bytesVary && ctx.state.machines.f.departureAt[row] !== Infinity) this.unsafe = true;
      }
      if (!Number.isFinite(wTerm + mTerm)) this.unsafe = true;
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
    for (let p = from; p < n; p++) this.evaluate(p);
    if (n > this.leaves) {
      // Regrown: every position goes into a tree twice as big or more.
      let leaves = this.leaves;
      while (leaves < n) leaves *= 2;
      this.leaves = leaves;
      this.tree = new Int32Array(2 * leaves).fill(-1);
      for (let p = 0; p < n; p++) if (this.rows[p]! >= 0 && this.exclusion[p] === undefined) this.tree[p + leaves] = p;
      for (let i = leaves - 1; i >= 1; i--) this.tree[i] = this.better(this.tree[2 * i]!, this.tree[2 * i + 1]!);
    } else {
      for (let p = from; p < n; p++) this.up(p);
    }
  }

  /** The position's cost (and the leaf of the tree once it has room for it). */
  private evaluate(p: number): void {
    const row = this.rows[p]!;
    if (row < 0) return;
    const est = this.est;
    const no = infeasibility(this.ctx, row, this.task, this.deadlineAt, undefined, est);
    this.exclusion[p] = no;
    if (no) {
      if (p < this.leaves) this.tree[p + this.leaves] = -1;
      return;
    }
    const cost = machineCredits(this.ctx, row, this.task, est.backlogSeconds);
    if (!Number.isFinite(cost)) this.unsafe = true;
    this.cost[p] = cost;
    this.backlog[p] = est.backlogSeconds;
    this.startsNow[p] = est.startsNow ? 1 : 0;
    if (p < this.leaves) this.tree[p + this.leaves] = p;
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
