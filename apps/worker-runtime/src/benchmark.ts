// The machine benchmark (docs/DESIGN.md, "Machines"): a fixed WebAssembly kernel timed for about
// half a second, the same code in browsers and in Node.
//
// The work unit: one normalized second is what a speed-1 slot computes in one second.
// Task work estimates (examples.ts) and machine speeds are both in these units, so a task
// of w normalized seconds should take about w / speed seconds on a slot of speed `speed`.
//
// The reference machine (speed 1.0) is the development machine of this project: 2 cores,
// Node 20.20, where the kernel ran REFERENCE_KERNEL_RATE iterations per second on one
// thread after warm-up. Faster slots get proportionally larger speeds.

/** Kernel iterations per second on one slot of the reference machine. */
export const REFERENCE_KERNEL_RATE = 1.4e8;

/**
 * The kernel, `run(n: i32) -> i32`: n rounds of two xorshift64 draws tested against the unit
 * circle (the inner loop of the Monte Carlo example), returning the hits. Assembled from:
 *   loop: x ^= x << 13; x ^= x >> 7; x ^= x << 17; f = (x >> 11) * 2^-53  (twice, f and g)
 *         if f*f + g*g <= 1 then c++
 * with x starting at 0x2545f4914f6cdd1d.
 */
const KERNEL_BASE64 =
  "AGFzbQEAAAABBgFgAX8BfwMCAQAHBwEDcnVuAAAKrwEBrAEDAX4CfwJ8Qp26s/uUkv2iJSEBAkADQCACIABPDQEgASABQg2GhSEBIAEgAUIHiIUhASABIAFCEYaFIQEgAUILiLpEAAAAAAAAoDyiIQQgASABQg2GhSEBIAEgAUIHiIUhASABIAFCEYaFIQEgAUILiLpEAAAAAAAAoDyiIQUgBCAEoiAFIAWioEQAAAAAAADwP2UEQCADQQFqIQMLIAJBAWohAgwACwALIAML";
/** run(1_000_000) must return this; a different figure means the kernel did not run as written. */
export const KERNEL_CHECK = { n: 1_000_000, hits: 785_898 };

export interface BenchmarkResult {
  /** Normalized work units per second of one slot; the reference machine is 1.0. */
  speed: number;
  /** Kernel iterations per second measured. */
  rate: number;
  iterations: number;
  elapsedMs: number;
}

export interface BenchmarkOptions {
  /** How long to measure, after a warm-up of a fifth of it. Default 500 ms. */
  durationMs?: number;
}

type Kernel = (n: number) => number;

async function loadKernel(): Promise<Kernel> {
  const binary = atob(KERNEL_BASE64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const { instance } = await WebAssembly.instantiate(bytes, {});
  return instance.exports.run as Kernel;
}

/** Times the kernel on the calling thread: run it in a worker to keep a page responsive. */
export async function runBenchmark(options: BenchmarkOptions = {}): Promise<BenchmarkResult> {
  const durationMs = options.durationMs ?? 500;
  const run = await loadKernel();
  const check = run(KERNEL_CHECK.n);
  if (check !== KERNEL_CHECK.hits) throw new Error(`benchmark kernel returned ${check}, expected ${KERNEL_CHECK.hits}`);

  // Warm-up lets the engine move the kernel to its optimizing tier before timing starts.
  let batch = 200_000;
  const warmUntil = performance.now() + durationMs / 5;
  while (performance.now() < warmUntil) run(batch);

  let iterations = 0;
  const started = performance.now();
  let elapsedMs = 0;
  while (elapsedMs < durationMs) {
    const t = performance.now();
    run(batch);
    iterations += batch;
    const dt = performance.now() - t;
    // Keep each batch near 20 ms so the total overshoots durationMs by little.
    if (dt < 10) batch *= 2;
    elapsedMs = performance.now() - started;
  }
  const rate = (iterations / elapsedMs) * 1000;
  return { speed: rate / REFERENCE_KERNEL_RATE, rate, iterations, elapsedMs };
}
