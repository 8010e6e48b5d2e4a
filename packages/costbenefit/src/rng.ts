// A seeded random source. The engine never owns randomness: callers pass an Rng so that a
// decision or a simulation replays exactly from its seed (CONVENTIONS: no Math.random).

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number;
  /** Exponential with the given rate (mean 1/rate). */
  exponential(rate: number): number;
  /** An independent stream derived from this one's seed and a label (for per-run streams). */
  fork(label: number | string): Rng;
}

function hashSeed(seed: number | string): number {
  // FNV-1a over the decimal or string form: any seed maps to a 32-bit state.
  const s = typeof seed === "number" ? `n:${seed}` : `s:${seed}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: 32-bit state, fast, good enough for simulation and tie-breaking. */
export function createRng(seed: number | string): Rng {
  let a = hashSeed(seed);
  const next = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    uniform: (lo, hi) => lo + (hi - lo) * next(),
    exponential: (rate) => -Math.log(1 - next()) / rate,
    fork: (label) => createRng(`${String(seed)}/${String(label)}`),
  };
}
