// Aggregation across simulation runs.
import { createRng } from "../rng.ts";

/**
 * Mean over all jobs of all runs, with a 95% interval from a bootstrap over whole runs (jobs of one
 * run share its load and are correlated; runs are independent). The percentile interval stays
 * within what the runs could give: a normal interval's lower end fell below 1, an impossible
 * slowdown, when a few heavy runs dominate. Resampled with a fixed seed, so the same runs give the
 * same interval.
 */
export function byJobMean(sums: readonly number[], counts: readonly number[], resamples = 2000): { mean: number; ci95: [number, number] } {
  const S = sums.reduce((a, b) => a + b, 0);
  const N = counts.reduce((a, b) => a + b, 0);
  const R = sums.length;
  const mean = N > 0 ? S / N : 0;
  if (R < 2 || N === 0) return { mean, ci95: [mean, mean] };
  const rng = createRng("bootstrap");
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    let n = 0;
    for (let i = 0; i < R; i++) {
      const r = rng.int(R);
      s += sums[r]!;
      n += counts[r]!;
    }
    means[b] = n > 0 ? s / n : mean;
  }
  means.sort();
  return { mean, ci95: [percentile(means, 0.025), percentile(means, 0.975)] };
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i]!;
}

/** Mean of per-run values with a 95% percentile-bootstrap interval (fixed seed, like byJobMean). */
export function byRunMean(xs: readonly number[], resamples = 2000): { mean: number; ci95: [number, number] } {
  const m = mean(xs);
  const R = xs.length;
  if (R < 2) return { mean: m, ci95: [m, m] };
  const rng = createRng("bootstrap");
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < R; i++) s += xs[rng.int(R)]!;
    means[b] = s / R;
  }
  means.sort();
  return { mean: m, ci95: [percentile(means, 0.025), percentile(means, 0.975)] };
}
