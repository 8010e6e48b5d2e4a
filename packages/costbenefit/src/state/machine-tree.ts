// The placement search's index: machines in a k-d tree, grouped by what their cost scales with
// (tree-split.ts), each node holding the extremes of its machines' profiles and loads. From those
// extremes the search works out, for one task, a lower bound of the cost of every machine under a
// node and whether any of them can take the task at all (pipeline/node-bound.ts), so it visits the
// few groups that can hold the cheapest machine instead of every machine. The grouping only makes
// the bounds tight; any grouping gives the same answer. Before the next search (`flush`), a machine
// whose load changed goes down the tree again by its new figures, and the leaves that changed and
// their ancestors are brought up to date; a machine that joins goes where its figures lead. The
// tree is rebuilt once splits have grown it by half, once 2% of the machines it was built with have
// left or the market has grown by half (its bounds take ln n for a count a little below theirs), or
// when the horizon changes.
import type { MachineTable } from "./machine-table.ts";
import { DIMS, LEAF, coordinates, select, widestDim } from "./tree-split.ts";

/** Past this many machines a leaf splits in two. */
const SPLIT = 2 * LEAF;

// Per node, float fields (stride F) ...
const CAP_MAX = 0; // capacity (speed x slots)
const SPEED_MAX = 1;
const BW_MAX = 2; // bandwidth
const PRICE_MIN = 3; // producer's price per second
const PPW_MIN = 4; // price per second over speed: per work unit
const SLOT_MEM_MAX = 5; // memory per slot
const MEM_MAX = 6; // memory of the whole machine
const REP_MAX = 7; // reputation
const DEP_MAX = 8; // departure
const Q_MIN = 9; // queued work over capacity: a floor of the backlog in seconds
const C_MIN = 10; // backlog seconds + drain rate x at: the backlog's line in time is c - r t
const R_MAX = 11; // drain rate, backlog seconds per second
const AT_MAX = 12; // when the backlog was last rolled
const MEM_USED_MIN = 13; // memory of running tasks
// Logarithms of the load factors over capacity, with ln n taken as `lnRef` (<= ln n while the
// tree stands): the compute cost is e^A x capacity x (n^(w / (capacity H)) - 1) with
// A = ln n x backlog / H - ln capacity, and the memory cost the same with B over the memory.
const AQ_MIN = 14; // A with the backlog's queued floor
const AC_MIN = 15; // A's line in time: AC - lnRef / H x rate x t
const B_MIN = 16;
const SPLIT_AT = 17;
const F = 18;
// ... and integer fields (stride I).
const LEFT = 0;
const RIGHT = 1;
const PARENT = 2;
/** First machine of a leaf (-1 when empty); -2 marks an inner node. */
const HEAD = 3;
const COUNT = 4; // machines, available or not
const AVAIL = 5; // machines whose producer offers their capacity
const MIN_ROW = 6;
const FREE = 7; // available machines with a free slot
const DIM = 8;
/** A split sends (coordinate, row) below (SPLIT_AT, SPLIT_ROW) left: machines alike still split evenly. */
const SPLIT_ROW = 9;
const I = 10;
const INNER = -2;

/** The field numbers above, for the search to copy into constants of its own (read once). */
export const FIELDS = {
  CAP_MAX, SPEED_MAX, BW_MAX, PRICE_MIN, PPW_MIN, SLOT_MEM_MAX, MEM_MAX, REP_MAX, DEP_MAX, Q_MIN, C_MIN, R_MAX, AT_MAX, MEM_USED_MIN,
  AQ_MIN, AC_MIN, B_MIN, HEAD, COUNT, AVAIL, MIN_ROW, FREE,
} as const;


export class MachineTree {
  /** Float fields of node v at v * F + field. */
  f = new Float64Array(0);
  /** Integer fields of node v at v * I + field. */
  i = new Int32Array(0);
  root = -1;
  private nodes = 0;
  /** Next machine in the same leaf, by row. */
  next = new Int32Array(0);
  private leafOf = new Int32Array(0);
  private dirtyFlag = new Uint8Array(0);
  private dirty: number[] = [];
  /** Machines whose load changed since the last flush: they may belong to another leaf now. */
  private moved = new Uint8Array(0);
  private movedRows: number[] = [];
  private needsBuild = true;
  private levelledWith = 0;
  private nodesBuilt = 0;
  /** ln n as the bounds take it: ln of a little fewer machines than the tree was built with. */
  lnRef = Math.log(2);
  private machinesRef = 2;
  private horizon = 3600;

  constructor(private readonly m: MachineTable) {}

  /** The horizon H the load figures are scaled by: a new one rebuilds the tree. */
  setHorizon(H: number): void {
    if (H === this.horizon) return;
    this.horizon = H;
    this.needsBuild = true;
  }

  /** Machines per leaf's list: `next[row]` after `i[v * I + HEAD]`, -1 ends it. */
  static readonly I = I;
  static readonly F = F;

  isLeaf(v: number): boolean {
    return this.i[v * I + HEAD]! !== INNER;
  }

  /** A leaf's first machine (then `next[row]`, -1 at the end). */
  head(v: number): number {
    return this.i[v * I + HEAD]!;
  }

  left(v: number): number {
    return this.i[v * I + LEFT]!;
  }

  right(v: number): number {
    return this.i[v * I + RIGHT]!;
  }

  /** A machine joined (its row is live and its profile set). */
  insert(row: number): void {
    this.rows(row + 1);
    this.leafOf[row] = -1;
    if (this.needsBuild || this.root < 0) {
      this.needsBuild = true;
      return;
    }
    const c = new Float64Array(DIMS);
    coordinates(this.m, row, this.lnRef, this.horizon, c);
    this.link(this.leafFor(c, row), row);
  }

  private leafFor(c: Float64Array, row: number): number {
    const ii = this.i;
    let v = this.root;
    while (ii[v * I + HEAD] === INNER) {
      const x = c[ii[v * I + DIM]!]!;
      const at = this.f[v * F + SPLIT_AT]!;
      v = x < at || (x === at && row < ii[v * I + SPLIT_ROW]!) ? ii[v * I + LEFT]! : ii[v * I + RIGHT]!;
    }
    return v;
  }

  private link(v: number, row: number): void {
    this.next[row] = this.i[v * I + HEAD]!;
    this.i[v * I + HEAD] = row;
    this.leafOf[row] = v;
    let count = 0;
    for (let r = row; r >= 0; r = this.next[r]!) count++;
    if (count > SPLIT) this.splitLeaf(v);
    else this.touchLeaf(v);
  }

  private unlink(v: number, row: number): void {
    let prev = -1;
    for (let r = this.i[v * I + HEAD]!; r >= 0; prev = r, r = this.next[r]!) {
      if (r !== row) continue;
      if (prev < 0) this.i[v * I + HEAD] = this.next[r]!;
      else this.next[prev] = this.next[r]!;
      break;
    }
    this.leafOf[row] = -1;
    this.touchLeaf(v);
  }

  /** A machine is leaving: call before its row is released. */
  remove(row: number): void {
    const v = this.leafOf[row]!;
    if (this.needsBuild || v < 0) {
      this.needsBuild = true;
      return;
    }
    this.unlink(v, row);
  }

  /** A known machine's profile changed: its place in the tree may no longer fit it. */
  profileChanged(row: number): void {
    this.loadChanged(row);
  }

  /** A machine's load changed (a task assigned, started, finished, moved, or a measured backlog). */
  loadChanged(row: number): void {
    if (this.needsBuild || this.moved[row] === 1) return;
    this.moved[row] = 1;
    this.movedRows.push(row);
  }

  /** Bring every node's extremes up to date: before each search. */
  flush(): void {
    // Leaves split as machines move or join: once the tree has half as many nodes again as when
    // built, it is rebuilt.
    if (this.nodes > 1.5 * Math.max(this.nodesBuilt, 64)) this.needsBuild = true;
    if (this.needsBuild) {
      this.build();
      return;
    }
    // Bounds take ln n as lnRef: valid while at least machinesRef machines remain, and close while
    // the market has not grown by half. Past either, every node's figures are worked out again.
    const count = this.m.count;
    if (count < this.machinesRef || count > 1.5 * Math.max(this.levelledWith, 32)) this.relevel(count);
    this.flushMoved();
    const d = this.dirty;
    for (let k = 0; k < d.length; k++) {
      const v = d[k]!;
      this.dirtyFlag[v] = 0;
      if (!this.aggregateLeaf(v)) continue;
      for (let p = this.i[v * I + PARENT]!; p >= 0; p = this.i[p * I + PARENT]!) if (!this.aggregateInner(p)) break;
    }
    d.length = 0;
  }

  /** Machines whose load changed go down the tree again; the leaves they leave or join are marked. */
  private flushMoved(): void {
    const rows = this.movedRows;
    if (rows.length > 0) {
      const c = new Float64Array(DIMS);
      for (let k = 0; k < rows.length; k++) {
        const row = rows[k]!;
        this.moved[row] = 0;
        const from = this.leafOf[row]!;
        if (from < 0) continue;
        coordinates(this.m, row, this.lnRef, this.horizon, c);
        const to = this.leafFor(c, row);
        if (to === from) this.touchLeaf(from);
        else {
          this.unlink(from, row);
          this.link(to, row);
        }
      }
      rows.length = 0;
    }
  }

  private touchLeaf(v: number): void {
    if (this.dirtyFlag[v] === 1) return;
    this.dirtyFlag[v] = 1;
    this.dirty.push(v);
  }

  private rows(n: number): void {
    if (n <= this.next.length) return;
    const size = Math.max(n, Math.ceil(this.next.length * 1.25), 64);
    const nx = new Int32Array(size);
    nx.set(this.next);
    this.next = nx;
    const lo = new Int32Array(size).fill(-1);
    lo.set(this.leafOf);
    this.leafOf = lo;
    const mv = new Uint8Array(size);
    mv.set(this.moved);
    this.moved = mv;
  }

  /** Room for `size` nodes, those in use kept. */
  private room(size: number): void {
    const fi = new Float64Array(size * F);
    fi.set(this.f.subarray(0, Math.min(this.f.length, size * F)));
    this.f = fi;
    const ii = new Int32Array(size * I);
    ii.set(this.i.subarray(0, Math.min(this.i.length, size * I)));
    this.i = ii;
    const df = new Uint8Array(size);
    df.set(this.dirtyFlag.subarray(0, Math.min(this.dirtyFlag.length, size)));
    this.dirtyFlag = df;
  }

  private newNode(): number {
    const v = this.nodes++;
    if (this.nodes * I > this.i.length) this.room(Math.max(64, Math.ceil(this.nodes * 1.25)));
    this.i[v * I + LEFT] = -1;
    this.i[v * I + RIGHT] = -1;
    this.i[v * I + PARENT] = -1;
    this.i[v * I + HEAD] = -1;
    this.dirtyFlag[v] = 0;
    return v;
  }

  /** Rebuild the whole tree over the live machines: O(machines log machines). */
  private build(): void {
    const m = this.m;
    this.rows(m.end);
    const perm: number[] = [];
    for (let r = 0; r < m.end; r++) if (m.live(r)) perm.push(r);
    const n = perm.length;
    this.level(n);
    const coords = new Float64Array(m.end * DIMS);
    const c = new Float64Array(DIMS);
    for (const r of perm) {
      coordinates(m, r, this.lnRef, this.horizon, c);
      coords.set(c, r * DIMS);
    }
    this.nodes = 0;
    // Exactly the nodes the build makes, and an eighth more for leaves that split later.
    this.room(Math.max(64, Math.ceil((2 * Math.ceil(n / LEAF) - 1) * 1.125)));
    this.dirty.length = 0;
    for (const r of this.movedRows) this.moved[r] = 0;
    this.movedRows.length = 0;
    this.root = n === 0 ? -1 : this.buildRange(Int32Array.from(perm), 0, n, Math.ceil(n / LEAF), coords, -1);
    this.needsBuild = false;
    this.nodesBuilt = this.nodes;
  }

  /** Take ln n for a little fewer than `count` machines (their A and B figures scale with it). */
  private level(count: number): void {
    this.levelledWith = count;
    this.machinesRef = Math.max(2, Math.floor(0.95 * count));
    this.lnRef = Math.log(this.machinesRef);
  }

  /** A new ln n for the bounds: every node's figures again, children before parents. O(machines). */
  private relevel(count: number): void {
    this.flushMoved();
    this.level(count);
    for (let v = this.nodes - 1; v >= 0; v--) {
      this.dirtyFlag[v] = 0;
      if (this.i[v * I + HEAD] === INNER) this.aggregateInner(v);
      else this.aggregateLeaf(v);
    }
    this.dirty.length = 0;
  }

  /** The subtree over perm[lo, hi) with `leaves` leaves of as many machines each as can be. */
  private buildRange(perm: Int32Array, lo: number, hi: number, leaves: number, coords: Float64Array, parent: number): number {
    const v = this.newNode();
    this.i[v * I + PARENT] = parent;
    if (leaves <= 1) {
      let head = -1;
      for (let k = hi - 1; k >= lo; k--) {
        const r = perm[k]!;
        this.next[r] = head;
        head = r;
        this.leafOf[r] = v;
      }
      this.i[v * I + HEAD] = head;
      this.aggregateLeaf(v);
      return v;
    }
    const dim = widestDim(perm, lo, hi, coords);
    const half = leaves >> 1;
    const mid = lo + Math.round(((hi - lo) * half) / leaves);
    select(perm, lo, hi, mid, coords, dim);
    this.i[v * I + HEAD] = INNER;
    this.i[v * I + DIM] = dim;
    this.i[v * I + SPLIT_ROW] = perm[mid]!;
    this.f[v * F + SPLIT_AT] = coords[perm[mid]! * DIMS + dim]!;
    const l = this.buildRange(perm, lo, mid, half, coords, v);
    const r = this.buildRange(perm, mid, hi, leaves - half, coords, v);
    this.i[v * I + LEFT] = l;
    this.i[v * I + RIGHT] = r;
    this.aggregateInner(v);
    return v;
  }

  /** A leaf grew past SPLIT machines: it becomes an inner node over two leaves. */
  private splitLeaf(v: number): void {
    const m = this.m;
    const members: number[] = [];
    for (let r = this.i[v * I + HEAD]!; r >= 0; r = this.next[r]!) members.push(r);
    const coords = new Float64Array(m.end * DIMS);
    const c = new Float64Array(DIMS);
    for (const r of members) {
      coordinates(m, r, this.lnRef, this.horizon, c);
      coords.set(c, r * DIMS);
    }
    const perm = Int32Array.from(members);
    const dim = widestDim(perm, 0, perm.length, coords);
    const mid = perm.length >> 1;
    select(perm, 0, perm.length, mid, coords, dim);
    const halves: number[] = [];
    for (const [lo, hi] of [[0, mid], [mid, perm.length]] as const) {
      const u = this.newNode();
      this.i[u * I + PARENT] = v;
      let head = -1;
      for (let k = hi - 1; k >= lo; k--) {
        const r = perm[k]!;
        this.next[r] = head;
        head = r;
        this.leafOf[r] = u;
      }
      this.i[u * I + HEAD] = head;
      this.aggregateLeaf(u);
      halves.push(u);
    }
    this.i[v * I + HEAD] = INNER;
    this.i[v * I + DIM] = dim;
    this.i[v * I + SPLIT_ROW] = perm[mid]!;
    this.f[v * F + SPLIT_AT] = coords[perm[mid]! * DIMS + dim]!;
    this.i[v * I + LEFT] = halves[0]!;
    this.i[v * I + RIGHT] = halves[1]!;
    // The node may sit in the dirty list as a leaf: it is an inner node now, updated here.
    this.aggregateInner(v);
    for (let p = this.i[v * I + PARENT]!; p >= 0; p = this.i[p * I + PARENT]!) if (!this.aggregateInner(p)) break;
  }

  /** A leaf's extremes from its machines; returns whether any changed. */
  private aggregateLeaf(v: number): boolean {
    if (this.i[v * I + HEAD] === INNER) return false;
    const m = this.m;
    const col = m.f;
    const running = m.i.running;
    const queued = m.i.queued;
    let count = 0, avail = 0, minRow = 0x7fffffff, free = 0;
    let capMax = -Infinity, speedMax = -Infinity, bwMax = -Infinity, priceMin = Infinity, ppwMin = Infinity, slotMemMax = -Infinity, memMax = -Infinity;
    let repMax = -Infinity, depMax = -Infinity, qMin = Infinity, cMin = Infinity, rMax = -Infinity, atMax = -Infinity, memUsedMin = Infinity;
    let aqMin = Infinity, acMin = Infinity, bMin = Infinity;
    const lr = this.lnRef / this.horizon;
    for (let r = this.i[v * I + HEAD]!; r >= 0; r = this.next[r]!) {
      count++;
      if (r < minRow) minRow = r;
      if (col.available[r] === 0) continue;
      avail++;
      const speed = col.speed[r]!;
      const slots = col.slots[r]!;
      const cap = col.capacity[r]!;
      const price = col.pricePerSecond[r]!;
      const slotMem = col.memoryPerSlot[r]!;
      if (running[r]! + queued[r]! < slots) free++;
      capMax = Math.max(capMax, cap);
      speedMax = Math.max(speedMax, speed);
      bwMax = Math.max(bwMax, col.bandwidth[r]!);
      priceMin = Math.min(priceMin, price);
      ppwMin = Math.min(ppwMin, price / speed);
      slotMemMax = Math.max(slotMemMax, slotMem);
      memMax = Math.max(memMax, slotMem * slots);
      repMax = Math.max(repMax, col.reputation[r]!);
      depMax = Math.max(depMax, col.departureAt[r]!);
      // Remaining work at t is max(queued, work - drain (t - at), 0) (MachineTable.remaining):
      // over capacity, at least the queued part and at least the line c - r t.
      const rate = (speed * Math.min(running[r]!, slots)) / cap;
      const at = col.at[r]!;
      const q = col.queuedWork[r]! / cap;
      const line = col.work[r]! / cap + rate * at;
      const lnCap = Math.log(cap);
      const used = col.runningMemory[r]!;
      const mem = slotMem * slots;
      qMin = Math.min(qMin, q);
      cMin = Math.min(cMin, line);
      rMax = Math.max(rMax, rate);
      atMax = Math.max(atMax, at);
      memUsedMin = Math.min(memUsedMin, used);
      aqMin = Math.min(aqMin, lr * q - lnCap);
      acMin = Math.min(acMin, lr * line - lnCap);
      bMin = Math.min(bMin, (this.lnRef * Math.max(0, used)) / mem - Math.log(mem));
    }
    const fi = this.f;
    const b = v * F;
    const ii = this.i;
    const a = v * I;
    let changed = ii[a + COUNT] !== count || ii[a + AVAIL] !== avail || ii[a + MIN_ROW] !== minRow || ii[a + FREE] !== free;
    ii[a + COUNT] = count;
    ii[a + AVAIL] = avail;
    ii[a + MIN_ROW] = minRow;
    ii[a + FREE] = free;
    changed = set(fi, b + CAP_MAX, capMax) || changed;
    changed = set(fi, b + SPEED_MAX, speedMax) || changed;
    changed = set(fi, b + BW_MAX, bwMax) || changed;
    changed = set(fi, b + PRICE_MIN, priceMin) || changed;
    changed = set(fi, b + PPW_MIN, ppwMin) || changed;
    changed = set(fi, b + SLOT_MEM_MAX, slotMemMax) || changed;
    changed = set(fi, b + MEM_MAX, memMax) || changed;
    changed = set(fi, b + REP_MAX, repMax) || changed;
    changed = set(fi, b + DEP_MAX, depMax) || changed;
    changed = set(fi, b + Q_MIN, qMin) || changed;
    changed = set(fi, b + C_MIN, cMin) || changed;
    changed = set(fi, b + R_MAX, rMax) || changed;
    changed = set(fi, b + AT_MAX, atMax) || changed;
    changed = set(fi, b + MEM_USED_MIN, memUsedMin) || changed;
    changed = set(fi, b + AQ_MIN, aqMin) || changed;
    changed = set(fi, b + AC_MIN, acMin) || changed;
    changed = set(fi, b + B_MIN, bMin) || changed;
    return changed;
  }

  /** An inner node's extremes from its two children; returns whether any changed. */
  private aggregateInner(v: number): boolean {
    const ii = this.i;
    const fi = this.f;
    const a = v * I;
    const l = ii[a + LEFT]!;
    const r = ii[a + RIGHT]!;
    const la = l * I;
    const ra = r * I;
    const count = ii[la + COUNT]! + ii[ra + COUNT]!;
    const avail = ii[la + AVAIL]! + ii[ra + AVAIL]!;
    const minRow = Math.min(ii[la + MIN_ROW]!, ii[ra + MIN_ROW]!);
    const free = ii[la + FREE]! + ii[ra + FREE]!;
    let changed = ii[a + COUNT] !== count || ii[a + AVAIL] !== avail || ii[a + MIN_ROW] !== minRow || ii[a + FREE] !== free;
    ii[a + COUNT] = count;
    ii[a + AVAIL] = avail;
    ii[a + MIN_ROW] = minRow;
    ii[a + FREE] = free;
    const b = v * F;
    const lb = l * F;
    const rb = r * F;
    changed = set(fi, b + CAP_MAX, Math.max(fi[lb + CAP_MAX]!, fi[rb + CAP_MAX]!)) || changed;
    changed = set(fi, b + SPEED_MAX, Math.max(fi[lb + SPEED_MAX]!, fi[rb + SPEED_MAX]!)) || changed;
    changed = set(fi, b + BW_MAX, Math.max(fi[lb + BW_MAX]!, fi[rb + BW_MAX]!)) || changed;
    changed = set(fi, b + PRICE_MIN, Math.min(fi[lb + PRICE_MIN]!, fi[rb + PRICE_MIN]!)) || changed;
    changed = set(fi, b + PPW_MIN, Math.min(fi[lb + PPW_MIN]!, fi[rb + PPW_MIN]!)) || changed;
    changed = set(fi, b + SLOT_MEM_MAX, Math.max(fi[lb + SLOT_MEM_MAX]!, fi[rb + SLOT_MEM_MAX]!)) || changed;
    changed = set(fi, b + MEM_MAX, Math.max(fi[lb + MEM_MAX]!, fi[rb + MEM_MAX]!)) || changed;
    changed = set(fi, b + REP_MAX, Math.max(fi[lb + REP_MAX]!, fi[rb + REP_MAX]!)) || changed;
    changed = set(fi, b + DEP_MAX, Math.max(fi[lb + DEP_MAX]!, fi[rb + DEP_MAX]!)) || changed;
    changed = set(fi, b + Q_MIN, Math.min(fi[lb + Q_MIN]!, fi[rb + Q_MIN]!)) || changed;
    changed = set(fi, b + C_MIN, Math.min(fi[lb + C_MIN]!, fi[rb + C_MIN]!)) || changed;
    changed = set(fi, b + R_MAX, Math.max(fi[lb + R_MAX]!, fi[rb + R_MAX]!)) || changed;
    changed = set(fi, b + AT_MAX, Math.max(fi[lb + AT_MAX]!, fi[rb + AT_MAX]!)) || changed;
    changed = set(fi, b + MEM_USED_MIN, Math.min(fi[lb + MEM_USED_MIN]!, fi[rb + MEM_USED_MIN]!)) || changed;
    changed = set(fi, b + AQ_MIN, Math.min(fi[lb + AQ_MIN]!, fi[rb + AQ_MIN]!)) || changed;
    changed = set(fi, b + AC_MIN, Math.min(fi[lb + AC_MIN]!, fi[rb + AC_MIN]!)) || changed;
    changed = set(fi, b + B_MIN, Math.min(fi[lb + B_MIN]!, fi[rb + B_MIN]!)) || changed;
    return changed;
  }
}

function set(a: Float64Array, k: number, x: number): boolean {
  if (a[k] === x) return false;
  a[k] = x;
  return true;
}
