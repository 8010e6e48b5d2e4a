// An indexed binary min-heap of machine rows keyed by their linearized unit cost (credits per
// work unit at the current load). The placement search walks it best-first, so the cheapest
// machine is found after inspecting a handful of machines instead of all of them.
// Ties are broken by machine row so the walk order is a total order (replayable decisions).

export class CostIndex {
  keys: Float64Array;
  heap: Int32Array;
  pos: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.keys = new Float64Array(capacity);
    this.heap = new Int32Array(capacity);
    this.pos = new Int32Array(capacity).fill(-1);
  }

  grow(capacity: number): void {
    const k = new Float64Array(capacity);
    k.set(this.keys);
    const h = new Int32Array(capacity);
    h.set(this.heap);
    const p = new Int32Array(capacity).fill(-1);
    p.set(this.pos);
    this.keys = k;
    this.heap = h;
    this.pos = p;
  }

  less(a: number, b: number): boolean {
    const ka = this.keys[a]!;
    const kb = this.keys[b]!;
    return ka < kb || (ka === kb && a < b);
  }

  insert(row: number, key: number): void {
    this.keys[row] = key;
    const i = this.size++;
    this.heap[i] = row;
    this.pos[row] = i;
    this.up(i);
  }

  remove(row: number): void {
    const i = this.pos[row]!;
    if (i < 0) return;
    const last = this.heap[--this.size]!;
    this.pos[row] = -1;
    if (i === this.size) return;
    this.heap[i] = last;
    this.pos[last] = i;
    this.up(i);
    this.down(this.pos[last]!);
  }

  update(row: number, key: number): void {
    const old = this.keys[row]!;
    this.keys[row] = key;
    const i = this.pos[row]!;
    if (i < 0) return;
    if (key < old) this.up(i);
    else this.down(i);
  }

  /** Rebuild the heap in O(n) after every key changed. */
  heapify(): void {
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private up(i: number): void {
    const h = this.heap;
    const s = h[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const ps = h[p]!;
      if (!this.less(s, ps)) break;
      h[i] = ps;
      this.pos[ps] = i;
      i = p;
    }
    h[i] = s;
    this.pos[s] = i;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = this.size;
    const s = h[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.less(h[c + 1]!, h[c]!)) c++;
      const cs = h[c]!;
      if (!this.less(cs, s)) break;
      h[i] = cs;
      this.pos[cs] = i;
      i = c;
    }
    h[i] = s;
    this.pos[s] = i;
  }
}
