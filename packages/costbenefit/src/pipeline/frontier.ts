// Best-first walk over a CostIndex: yields its machines in increasing key order without touching
// the index, by keeping a small heap of index positions (the "frontier"). Typed arrays, reused.
import type { CostIndex } from "../state/cost-index.ts";

export class Frontier {
  private pos = new Int32Array(256);
  private key = new Float64Array(256);
  private size = 0;
  private idx: CostIndex | undefined;

  start(idx: CostIndex): void {
    this.idx = idx;
    this.size = 0;
    this.push(0);
  }

  get empty(): boolean {
    return this.size === 0;
  }

  /** Smallest key not yet yielded: every machine still to come has at least this key. */
  peekKey(): number {
    return this.size > 0 ? this.key[0]! : Infinity;
  }

  /** Next machine row in key order. */
  next(): number {
    const p = this.pop();
    this.push(2 * p + 1);
    this.push(2 * p + 2);
    return this.idx!.heap[p]!;
  }

  private push(p: number): void {
    const idx = this.idx!;
    if (p >= idx.size) return;
    if (this.size === this.pos.length) {
      const a = new Int32Array(this.size * 2);
      a.set(this.pos);
      this.pos = a;
      const b = new Float64Array(this.size * 2);
      b.set(this.key);
      this.key = b;
    }
    const k = idx.keys[idx.heap[p]!]!;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pk = this.key[parent]!;
      if (pk <= k) break;
      this.pos[i] = this.pos[parent]!;
      this.key[i] = pk;
      i = parent;
    }
    this.pos[i] = p;
    this.key[i] = k;
  }

  private pop(): number {
    const top = this.pos[0]!;
    const lastP = this.pos[--this.size]!;
    const lastK = this.key[this.size]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= this.size) break;
      if (c + 1 < this.size && this.key[c + 1]! < this.key[c]!) c++;
      if (this.key[c]! >= lastK) break;
      this.pos[i] = this.pos[c]!;
      this.key[i] = this.key[c]!;
      i = c;
    }
    this.pos[i] = lastP;
    this.key[i] = lastK;
    return top;
  }
}
