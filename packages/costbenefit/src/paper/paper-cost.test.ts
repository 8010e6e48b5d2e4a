import { describe, expect, it } from "vitest";
import { currentCost, machineCost, marginalCost, nextLmax } from "./paper-cost.ts";

describe("L_max (TPDS 2000: smallest power of two at or above the largest load seen)", () => {
  it("starts at 1 and stays there while loads are at most 1", () => {
    expect(nextLmax(1, 0)).toBe(1);
    expect(nextLmax(1, 1)).toBe(1);
  });

  it("doubles when a load exceeds it, as many times as it takes", () => {
    expect(nextLmax(1, 2)).toBe(2);
    expect(nextLmax(2, 3)).toBe(4);
    expect(nextLmax(4, 4)).toBe(4);
    expect(nextLmax(4, 5)).toBe(8);
    expect(nextLmax(1, 17)).toBe(32);
  });

  it("never shrinks when loads fall", () => {
    expect(nextLmax(16, 1)).toBe(16);
  });
});

describe("the machine cost C = n^(memory used / memory) + n^(jobs / L_max), n = 6", () => {
  it("is 2 on an idle machine", () => {
    expect(machineCost({ jobs: 0, memoryUsedMb: 0, memoryMb: 64 }, 1)).toBe(2);
  });

  it("prices a job's memory past the machine's capacity instead of refusing it", () => {
    // 24 MB machine holding 20 MB, a 16 MB job: memory goes to 36/24 = 1.5 of capacity.
    const m = { jobs: 2, memoryUsedMb: 20, memoryMb: 24 };
    const expected = 6 ** (36 / 24) - 6 ** (20 / 24) + 6 ** (3 / 4) - 6 ** (2 / 4);
    expect(marginalCost(m, 16, 4)).toBeCloseTo(expected, 12);
    expect(6 ** (36 / 24)).toBeGreaterThan(6); // past 1 the memory term keeps growing
  });

  it("marginal cost is the cost after minus the cost before, and the job's current cost is its inverse", () => {
    const before = { jobs: 3, memoryUsedMb: 30, memoryMb: 32 };
    const after = { jobs: 4, memoryUsedMb: 40, memoryMb: 32 };
    expect(marginalCost(before, 10, 8)).toBeCloseTo(machineCost(after, 8) - machineCost(before, 8), 12);
    expect(currentCost(after, 10, 8)).toBeCloseTo(marginalCost(before, 10, 8), 12);
  });

  it("makes a machine over its memory dearer than a busier machine within it", () => {
    const thrashing = { jobs: 1, memoryUsedMb: 30, memoryMb: 24 };
    const busy = { jobs: 3, memoryUsedMb: 10, memoryMb: 64 };
    expect(marginalCost(thrashing, 4, 4)).toBeGreaterThan(marginalCost(busy, 4, 4));
  });
});
