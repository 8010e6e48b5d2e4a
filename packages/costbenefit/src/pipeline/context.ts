// What every stage of one placement search shares: the state, the time, the constants derived
// from settings, and the tentative loads of the placement being built (nothing is written to
// the state until a decision is committed).
import type { MarketState } from "../state/market-state.ts";

export class Overlay {
  work = new Map<number, number>();
  count = new Map<number, number>();
  memory = new Map<number, number>();
  bytes = 0;

  add(slot: number, work: number, memoryMb: number, startsNow: boolean, bytes: number): void {
    this.work.set(slot, (this.work.get(slot) ?? 0) + work);
    this.count.set(slot, (this.count.get(slot) ?? 0) + 1);
    // Counted whether or not the task starts at once: the bounded check stays conservative.
    void startsNow;
    this.memory.set(slot, (this.memory.get(slot) ?? 0) + memoryMb);
    this.bytes += bytes;
  }

  clear(): void {
    this.work.clear();
    this.count.clear();
    this.memory.clear();
    this.bytes = 0;
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
  /** Keys drained since the index was refreshed are at most this factor too high. */
  readonly pruneFactor: number;
  readonly maxCandidates: number;
  readonly minReputation: number;
  /** Enforce usage <= maximum for compute (backlog <= H) and the link (seed 003, 4.3). */
  bounded: boolean;
  readonly overlay: Overlay;
}

// One overlay reused by every search: contexts never overlap (decisions are synchronous).
const sharedOverlay = new Overlay();

export function createContext(state: MarketState, now: number, minReputation = 0): SearchContext {
  state.ensureIndex(now);
  const s = state.settings;
  const n = state.n;
  const lnN = Math.log(n);
  return {
    state, now, n, lnN,
    P: s.priceConstant,
    H: s.horizonSeconds,
    linkBytesPerSecond: s.linkBytesPerSecond,
    pruneFactor: Math.exp(-lnN * Math.max(0, now - state.rekeyAt) / s.horizonSeconds),
    maxCandidates: s.maxCandidatesPerTask,
    minReputation,
    bounded: true,
    overlay: (sharedOverlay.clear(), sharedOverlay),
  };
}
