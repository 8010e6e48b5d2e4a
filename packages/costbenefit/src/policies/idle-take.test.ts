import { describe, expect, it } from "vitest";
import { idleTake } from "./idle-take.ts";

describe("an idle slot taking queued work", () => {
  it("takes work from a machine that asks as much or more, never from a cheaper one", () => {
    expect(idleTake({ takerPricePerSecond: 0.1, holderPricePerSecond: 0.5, holderMayNotRun: false }).take).toBe(true);
    expect(idleTake({ takerPricePerSecond: 0.5, holderPricePerSecond: 0.5, holderMayNotRun: false }).take).toBe(true);
    const dearer = idleTake({ takerPricePerSecond: 0.9, holderPricePerSecond: 0.5, holderMayNotRun: false });
    expect(dearer).toEqual({ take: false, reason: { code: "idle-take", why: "dearer", takerPricePerSecond: 0.9, holderPricePerSecond: 0.5 } });
  });

  it("takes a copy its own machine may never run, whatever the asks", () => {
    expect(idleTake({ takerPricePerSecond: 9, holderPricePerSecond: 0.1, holderMayNotRun: true })).toMatchObject({ take: true, reason: { why: "holder-may-not-run" } });
  });
});
