// What every stage of one placement search shares: the state, the time, the constants derived
// from settings, and the tentative loads of the placement being built (nothing is written to
// the state until a decision is committed).
import type { MarketState } from "../state/market-state.ts";

/** Tentative loads of the plan being built, per machine row: typed arrays with a generation
 * stamp, so reading an untouched machine costs one comparison and clearing costs nothing. */
export class Overlay {
  private stamp = new Int32Array(64);
  private gen = 1;
  private w = new Float64Array(64);
  private c = new Int32Array(64);
  private mem = new Float64Array(64);
  bytes = 0;
  /** Tasks placed tentatively so far. */
  total = 0;

  workOf(row: number): number {
    return this.stamp[row] === this.gen ? this.w[row]! : 0;
  }

  countOf(row: number): number {
    return this.stamp[row] === this.gen ? this.c[row]! : 0;
  }

  memoryOf(row: number): number {
    return this.stamp[row] === this.gen ? this.mem[row]! : 0;
  }

  /** Memory counts whether or not the task starts at once: the bounded check stays conservative. */
  add(row: number, work: number, memoryMb: number, bytes: number): void {
    if (row >= this.stamp.length) this.grow(Math.max(row + 1, this.stamp.length * 2));
    if (this.stamp[row] !== this.gen) {
      this.stamp[row] = this.gen;
      this.w[row] = 0;
      this.c[row] = 0;
      this.mem[row] = 0;
    }
    this.w[row]! += work;
    this.c[row]!++;
    this.mem[row]! += memoryMb;
    this.bytes += bytes;
    this.total++;
  }

  clear(): void {
    this.gen++;
    this.bytes = 0;
    this.total = 0;
  }

  private grow(n: number): void {
    const s = new Int32Array(n); s.set(this.stamp); this.stamp = s;
    const w = new Float64Array(n); w.set(this.w); this.w = w;
    const c = new Int32Array(n); c.set(this.c); this.c = c;
    const m = new Float64Array(n); m.set(this.mem); this.mem = m;
  }
}

export interface SearchContext {
  readonly state: MarketState;
  readonly now: number;
  readonly n: number;
  readonly lnN: number;
  readonly P: number;
  readonly H: number;
  readonly linkBytesPerSecond: number;
  readonly maxCandidates: number;
  readonly minReputation: number;
  /** Enforce usage <= maximum for compute (backlog <= H) and the link (the Java Market paper, 4.3). */
  bounded: boolean;
  readonly overlay: Overlay;
}

// One overlay reused by every search: contexts never overlap (decisions are synchronous).
const sharedOverlay = new Overlay();

export function createContext(state: MarketState, now: number, minReputation = 0): SearchContext {
  state.ensureIndex();
  const s = state.settings;
  const n = state.n;
  const lnN = Math.log(n);
  return {
    state, now, n, lnN,
    P: s.priceConstant,
    H: s.horizonSeconds,
    linkBytesPerSecond: s.linkBytesPerSecond,
    maxCandidates: s.maxCandidatesPerTask,
    minReputation,
    bounded: true,
    overlay: (sharedOverlay.clear(), sharedOverlay),
  };
}
