// The engine's answers the live market applies as they are: the policy it runs, the bandwidth it
// plans on for an unmeasured link, the leases a machine may hold, the spare work it may give up.
import { describe, expect, it } from "vitest";
import { createLivePolicy, createPolicy } from "./policies/policy.ts";
import { MachineProfile, UNMEASURED_BANDWIDTH } from "./machine.ts";
import { leaseRoom, leaseRoomLeft } from "./settlement.ts";
import { spareTasks } from "./policies/idle-take.ts";

describe("the rules a live market runs on", () => {
  it("rebalances on any gain, where the lab keeps its minimum gain", () => {
    expect(createPolicy("miserly").profile.migration.minGain).toBeGreaterThan(0);
    expect(createLivePolicy("miserly").profile.migration.minGain).toBe(0);
    // A policy that does not rebalance is run as the lab has it.
    expect(createLivePolicy("mosix").profile).toEqual(createPolicy("mosix").profile);
  });

  it("plans an unmeasured link at UNMEASURED_BANDWIDTH, and a measured one as measured", () => {
    const m = { id: "m", slots: 1, speed: 1, memoryPerSlotMb: 512, kind: "opportunistic" as const, pricePerSecond: 0 };
    expect(MachineProfile.parse(m).bandwidthBytesPerSecond).toBe(UNMEASURED_BANDWIDTH);
    expect(MachineProfile.parse({ ...m, bandwidthBytesPerSecond: 5e6 }).bandwidthBytesPerSecond).toBe(5e6);
  });

  it("lets a machine hold two leases per offered slot, less what it holds", () => {
    expect(leaseRoom(4)).toBe(8);
    expect(leaseRoomLeft(4, 3)).toBe(5);
    expect(leaseRoomLeft(4, 9)).toBe(0);
    expect(leaseRoomLeft(0, 0)).toBe(0);
  });

  it("gives up as spare only the queued tasks its free slots do not take next", () => {
    expect(spareTasks({ queueLength: 10, offeredSlots: 4, leasesRunning: 1 })).toBe(7);
    expect(spareTasks({ queueLength: 2, offeredSlots: 4, leasesRunning: 0 })).toBe(0);
    expect(spareTasks({ queueLength: 5, offeredSlots: 2, leasesRunning: 6 })).toBe(5);
  });
});
