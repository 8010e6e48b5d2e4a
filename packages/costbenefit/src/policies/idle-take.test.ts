import { describe, expect, it } from "vitest";
import { idleTake, idleTakeOrder, spareFrom } from "./idle-take.ts";

describe("an idle slot taking queued work", () => {
  it("takes work from a machine that asks as much or more, never from a cheaper one", () => {
    expect(idleTake({ takerAsk: 0.1, holderAsk: 0.5, holderMayNotRun: false }).take).toBe(true);
    expect(idleTake({ takerAsk: 0.5, holderAsk: 0.5, holderMayNotRun: false }).take).toBe(true);
    // A machine of the same price whose benchmark came out a little slower still helps.
    expect(idleTake({ takerAsk: 0.5 / 1.31, holderAsk: 0.5 / 1.4, holderMayNotRun: false }).take).toBe(true);
    expect(idleTake({ takerAsk: 0.56, holderAsk: 0.5, holderMayNotRun: false }).take).toBe(false);
    const dearer = idleTake({ takerAsk: 0.9, holderAsk: 0.5, holderMayNotRun: false });
    expect(dearer).toEqual({ take: false, reason: { code: "idle-take", why: "dearer", takerAsk: 0.9, holderAsk: 0.5 } });
  });

  it("takes a copy its own machine may never run, whatever the asks", () => {
    expect(idleTake({ takerAsk: 9, holderAsk: 0.1, holderMayNotRun: true })).toMatchObject({ take: true, reason: { why: "holder-may-not-run" } });
  });

  it("looks first at the machine with the most queued work per offered slot, and skips empty queues", () => {
    const a = { name: "a", queueLength: 8, offeredSlots: 4, leasesRunning: 4 };
    const b = { name: "b", queueLength: 6, offeredSlots: 1, leasesRunning: 1 };
    const c = { name: "c", queueLength: 0, offeredSlots: 1, leasesRunning: 0 };
    // A machine switched off (no offered slots) counts as one slot, so its queue is taken first.
    const off = { name: "off", queueLength: 3, offeredSlots: 0, leasesRunning: 0 };
    expect(idleTakeOrder([a, b, c, off]).map((h) => h.name)).toEqual(["b", "off", "a"]);
  });

  it("leaves a holder the tasks its own free slots take next", () => {
    expect(spareFrom({ queueLength: 5, offeredSlots: 4, leasesRunning: 1 })).toBe(3);
    expect(spareFrom({ queueLength: 5, offeredSlots: 2, leasesRunning: 2 })).toBe(0);
    expect(spareFrom({ queueLength: 5, offeredSlots: 0, leasesRunning: 0 })).toBe(0);
  });
});
