// A binary min-heap of events keyed by (time, insertion order), stored in typed arrays so the
// simulator allocates nothing per event. An event is a kind and an integer argument.

export class EventQueue {
  private time = new Float64Array(1024);
  private seq = new Float64Array(1024);
  private kind = new Int32Array(1024);
  private arg = new Int32Array(1024);
  private n = 0;
  private counter = 0;

  get size(): number {
    return this.n;
  }

  push(time: number, kind: number, arg: number): void {
    if (this.n === this.time.length) this.grow();
    let i = this.n++;
    const s = this.counter++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.time[p]! < time || (this.time[p] === time && this.seq[p]! < s)) break;
      this.move(p, i);
      i = p;
    }
    this.time[i] = time;
    this.seq[i] = s;
    this.kind[i] = kind;
    this.arg[i] = arg;
  }

  /** Time of the next event (Infinity when empty). */
  peekTime(): number {
    return this.n > 0 ? this.time[0]! : Infinity;
  }

  /** Pop the next event into `out` ([time, kind, arg]); false when empty. */
  pop(out: { time: number; kind: number; arg: number }): boolean {
    if (this.n === 0) return false;
    out.time = this.time[0]!;
    out.kind = this.kind[0]!;
    out.arg = this.arg[0]!;
    const last = --this.n;
    if (last === 0) return true;
    const t = this.time[last]!;
    const s = this.seq[last]!;
    const k = this.kind[last]!;
    const a = this.arg[last]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= last) break;
      if (c + 1 < last && (this.time[c + 1]! < this.time[c]! || (this.time[c + 1] === this.time[c] && this.seq[c + 1]! < this.seq[c]!))) c++;
      if (t < this.time[c]! || (t === this.time[c] && s < this.seq[c]!)) break;
      this.move(c, i);
      i = c;
    }
    this.time[i] = t;
    this.seq[i] = s;
    this.kind[i] = k;
    this.arg[i] = a;
    return true;
  }

  private move(from: number, to: number): void {
    this.time[to] = this.time[from]!;
    this.seq[to] = this.seq[from]!;
    this.kind[to] = this.kind[from]!;
    this.arg[to] = this.arg[from]!;
  }

  private grow(): void {
    const n = this.time.length * 2;
    const t = new Float64Array(n); t.set(this.time); this.time = t;
    const s = new Float64Array(n); s.set(this.seq); this.seq = s;
    const k = new Int32Array(n); k.set(this.kind); this.kind = k;
    const a = new Int32Array(n); a.set(this.arg); this.arg = a;
  }
}
