import { describe, expect, it } from "vitest";
import { byJobMean, percentile } from "./stats.ts";

describe("byJobMean", () => {
  it("weights runs by their number of jobs and narrows its interval with more runs", () => {
    const few = byJobMean([10, 40], [10, 20]);
    expect(few.mean).toBeCloseTo(50 / 30);
    const many = byJobMean(Array(50).fill(0).flatMap(() => [10, 40]), Array(50).fill(0).flatMap(() => [10, 20]));
    expect(many.mean).toBeCloseTo(50 / 30);
    expect(many.ci95[1] - many.ci95[0]).toBeLessThan(few.ci95[1] - few.ci95[0]);
    expect(many.ci95[0]).toBeLessThan(many.mean);
    expect(many.ci95[1]).toBeGreaterThan(many.mean);
  });

  it("keeps its interval within the runs' own means when a few heavy runs dominate", () => {
    // 98 light runs (slowdown 1.2 over 100 jobs) and 2 thrashing ones (slowdown 400): the mean is
    // about 9; a normal interval would reach below 1, which no slowdown can be.
    const sums = [...Array(98).fill(120), 40_000, 40_000];
    const counts = Array(100).fill(100);
    const { mean, ci95 } = byJobMean(sums, counts);
    expect(mean).toBeCloseTo(9.176);
    expect(ci95[0]).toBeGreaterThanOrEqual(1.2);
    expect(ci95[0]).toBeLessThan(mean);
    expect(ci95[1]).toBeGreaterThan(mean);
    expect(byJobMean(sums, counts)).toEqual({ mean, ci95 });
  });

  it("reads percentiles from sorted samples", () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 0.5)).toBe(50);
    expect(percentile(xs, 0.99)).toBe(99);
  });
});
