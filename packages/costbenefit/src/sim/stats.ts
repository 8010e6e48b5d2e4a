// Aggregation across simulation runs.

/** Mean over all jobs of all runs, with a 95% interval that treats runs as clusters of jobs. */
export function byJobMean(sums: readonly number[], counts: readonly number[]): { mean: number; ci95: [number, number] } {
  const S = sums.reduce((a, b) => a + b, 0);
  const N = counts.reduce((a, b) => a + b, 0);
  const R = sums.length;
  const mean = N > 0 ? S / N : 0;
  if (R < 2 || N === 0) return { mean, ci95: [mean, mean] };
  // Ratio estimator: jobs within a run are correlated (same load), runs are independent.
  const nBar = N / R;
  let v = 0;
  for (let i = 0; i < R; i++) v += (sums[i]! - mean * counts[i]!) ** 2;
  const se = Math.sqrt(v / (R * (R - 1))) / nBar;
  return { mean, ci95: [mean - 1.96 * se, mean + 1.96 * se] };
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i]!;
}
