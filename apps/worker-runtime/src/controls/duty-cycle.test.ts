import { describe, expect, it } from "vitest";
import { dutyCycle, offeredSpeed, restAfterMs } from "./duty-cycle.ts";

describe("the CPU limit's duty cycle", () => {
  it("rests each slot so that it is busy the chosen share of the time", () => {
    expect(restAfterMs(1_000, 50)).toBe(1_000);
    expect(restAfterMs(1_000, 25)).toBe(3_000);
    expect(restAfterMs(3_000, 75)).toBe(1_000);
    for (const limit of [1, 10, 33, 50, 90]) expect(dutyCycle(1_234, limit)).toBeCloseTo(limit / 100, 10);
  });

  it("does not rest without a limit, and offers the market the limited speed", () => {
    expect(restAfterMs(1_000, 100)).toBe(0);
    expect(restAfterMs(0, 50)).toBe(0);
    expect(offeredSpeed(2, 50)).toBe(1);
    expect(offeredSpeed(2, 100)).toBe(2);
  });
});
