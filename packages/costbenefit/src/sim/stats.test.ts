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
  });

  it("reads percentiles from sorted samples", () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 0.5)).toBe(50);
    expect(percentile(xs, 0.99)).toBe(99);
  });
});
