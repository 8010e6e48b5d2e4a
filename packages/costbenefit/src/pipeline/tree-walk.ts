// The machine tree's nodes in increasing order of their bound for one task (node-bound.ts), ties
// by lowest row: a best-first walk with a small heap of nodes. Every walk of the same task over the
// same state meets the nodes in the same order, whoever drives it (selection.ts stops it as soon as
// no node left can beat the best machine found; same-tasks.ts goes on for a run of tasks).
import type { Exclusions } from "../reasons.ts";
import { FIELDS, MachineTree } from "../state/machine-tree.ts";
import type { NodeBound } from "./node-bound.ts";

const { AVAIL, COUNT, MIN_ROW } = FIELDS;
const I = MachineTree.I;

export class TreeWalk {
  private lb = new Float64Array(64);
  private row = new Int32Array(64);
  private node = new Int32Array(64);
  private size = 0;
  private tree!: MachineTree;
  private test!: NodeBound;
  private why: Exclusions | undefined;

  /**
   * Start at the root. Nodes ruled out whole are counted in `why`, if given, under their check
   * (their machines were not inspected one by one: `inspected` does not count them).
   */
  start(tree: MachineTree, test: NodeBound, why: Exclusions | undefined): void {
    this.tree = tree;
    this.test = test;
    this.why = why;
    this.size = 0;
    if (tree.root >= 0) this.offer(tree.root);
  }

  get empty(): boolean {
    return this.size === 0;
  }

  /** The bound and lowest row of the next node: no machine still to come is below both. */
  get topBound(): number {
    return this.lb[0]!;
  }

  get topRow(): number {
    return this.row[0]!;
  }

  /** Take the next node: an inner node's children join the walk; a leaf's machines are the caller's. */
  pop(): number {
    const v = this.node[0]!;
    const n = --this.size;
    if (n > 0) this.sift(this.lb[n]!, this.row[n]!, this.node[n]!);
    const tree = this.tree;
    if (!tree.isLeaf(v)) {
      this.offer(tree.left(v));
      this.offer(tree.right(v));
    }
    return v;
  }

  /** The next leaf, its bound and row in `leafBound` and `leafRow`; -1 once the walk is over. */
  nextLeaf(): number {
    while (this.size > 0) {
      this.leafBound = this.lb[0]!;
      this.leafRow = this.row[0]!;
      const v = this.pop();
      if (this.tree.isLeaf(v)) return v;
    }
    return -1;
  }

  leafBound = 0;
  leafRow = 0;

  private offer(v: number): void {
    const tree = this.tree;
    const count = tree.i[v * I + COUNT]!;
    if (count === 0) return;
    const lb = this.test.bound(tree, v);
    if (lb < 0) {
      const why = this.why;
      if (why) {
        const avail = tree.i[v * I + AVAIL]!;
        why.unavailable += count - avail;
        if (this.test.no !== "unavailable") why[this.test.no!] += avail;
      }
      return;
    }
    if (this.size === this.lb.length) this.grow();
    // Sift up.
    const row = tree.i[v * I + MIN_ROW]!;
    let k = this.size++;
    while (k > 0) {
      const p = (k - 1) >> 1;
      const pl = this.lb[p]!;
      if (pl < lb || (pl === lb && this.row[p]! < row)) break;
      this.lb[k] = pl;
      this.row[k] = this.row[p]!;
      this.node[k] = this.node[p]!;
      k = p;
    }
    this.lb[k] = lb;
    this.row[k] = row;
    this.node[k] = v;
  }

  /** Put (lb, row, v) in at the top's place and sift it down. */
  private sift(lb: number, row: number, v: number): void {
    const n = this.size;
    let k = 0;
    for (;;) {
      let c = 2 * k + 1;
      if (c >= n) break;
      if (c + 1 < n && (this.lb[c + 1]! < this.lb[c]! || (this.lb[c + 1] === this.lb[c] && this.row[c + 1]! < this.row[c]!))) c++;
      const cl = this.lb[c]!;
      if (lb < cl || (lb === cl && row < this.row[c]!)) break;
      this.lb[k] = cl;
      this.row[k] = this.row[c]!;
      this.node[k] = this.node[c]!;
      k = c;
    }
    this.lb[k] = lb;
    this.row[k] = row;
    this.node[k] = v;
  }

  private grow(): void {
    const n = this.lb.length * 2;
    const lb = new Float64Array(n);
    lb.set(this.lb);
    this.lb = lb;
    const row = new Int32Array(n);
    row.set(this.row);
    this.row = row;
    const node = new Int32Array(n);
    node.set(this.node);
    this.node = node;
  }
}
