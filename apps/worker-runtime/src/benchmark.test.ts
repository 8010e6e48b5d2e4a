import { describe, expect, it } from "vitest";
import { REFERENCE_KERNEL_RATE, runBenchmark } from "./benchmark.ts";

describe("runBenchmark", () => {
  it("measures for the asked duration and normalizes by the reference rate", async () => {
    const r = await runBenchmark({ durationMs: 100 });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(r.iterations).toBeGreaterThan(0);
    expect(r.speed).toBeCloseTo(r.rate / REFERENCE_KERNEL_RATE, 10);
    expect(r.speed).toBeGreaterThan(0);
  });
});
