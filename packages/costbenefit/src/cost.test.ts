import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { expectedPayment, marginalCost, marginalCostLn, resourceCost, resourceMarginalCost } from "./cost.ts";

describe("resourceCost", () => {
  it("is 1 when idle and n when full, as in the Java Market paper section 4.3", () => {
    expect(resourceCost(10, 0, 100)).toBe(1);
    expect(resourceCost(10, 100, 100)).toBeCloseTo(10);
    expect(resourceCost(10, 50, 100)).toBeCloseTo(Math.sqrt(10));
  });

  it("is increasing and convex in usage (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 100_000 }),
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 1e-6, max: 0.5, noNaN: true }),
        (n, max, frac, stepFrac) => {
          const u = frac * max;
          const h = stepFrac * max;
          const a = resourceCost(n, u, max);
          const b = resourceCost(n, u + h, max);
          const c = resourceCost(n, u + 2 * h, max);
          expect(b).toBeGreaterThan(a);
          // Convex: the second step costs at least as much as the first.
          expect(c - b).toBeGreaterThanOrEqual((b - a) * (1 - 1e-9));
          // Marginal cost grows with existing usage.
          expect(resourceMarginalCost(n, u + h, max, h)).toBeGreaterThanOrEqual(resourceMarginalCost(n, u, max, h) * (1 - 1e-9));
        },
      ),
    );
  });

  it("prices a placement as cost after minus cost before, and stays exact for a tiny demand", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 100_000 }),
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        fc.double({ min: 1e-3, max: 1, noNaN: true }),
        (n, max, frac, demandFrac) => {
          const u = frac * max;
          const d = demandFrac * max;
          const difference = resourceCost(n, u + d, max) - resourceCost(n, u, max);
          expect(Math.abs(marginalCostLn(Math.log(n), u, max, d) - difference)).toBeLessThanOrEqual(1e-9 * Math.max(1, difference));
          expect(resourceMarginalCost(n, u, max, d)).toBe(marginalCostLn(Math.log(n), u, max, d));
        },
      ),
    );
    // A nanosecond of work on an idle machine costs ln(n)/H per second of it, to 12 digits; the
    // difference of two powers keeps only about 4 of them.
    const tiny = 1e-9;
    expect(marginalCostLn(Math.log(1000), 0, 3600, tiny) / tiny).toBeCloseTo(Math.log(1000) / 3600, 12);
  });
});

describe("marginalCost", () => {
  const base = {
    n: 10, priceConstant: 2, horizonSeconds: 100, linkBytesPerSecond: 1000,
    backlogSeconds: 0, capacity: 2, speed: 1, memoryUsedMb: 0, memoryMaxMb: 1000, pricePerSecond: 0.5,
    committedBytes: 0, work: 50, memoryMb: 100, bytes: 10_000,
  };

  it("adds compute, memory and network marginals, priced by P, plus the producer's expected payment", () => {
    const m = marginalCost(base);
    expect(m.compute).toBeCloseTo(Math.pow(10, 0.25) - 1);
    expect(m.memory).toBeCloseTo(Math.pow(10, 0.1) - 1);
    expect(m.network).toBeCloseTo(Math.pow(10, 0.1) - 1);
    expect(m.credits).toBeCloseTo(2 * (m.compute + m.memory + m.network));
    expect(m.payment).toBeCloseTo(25);
    expect(m.total).toBeCloseTo(m.credits + 25);
  });

  it("charges more on a busier machine than on an idle one", () => {
    expect(marginalCost({ ...base, backlogSeconds: 80 }).total).toBeGreaterThan(marginalCost(base).total);
    expect(marginalCost({ ...base, memoryUsedMb: 800 }).total).toBeGreaterThan(marginalCost(base).total);
  });

  it("pays an opportunistic producer for the seconds the task takes at its speed", () => {
    expect(expectedPayment(0.01, 300, 1.5)).toBeCloseTo(2);
  });
});
