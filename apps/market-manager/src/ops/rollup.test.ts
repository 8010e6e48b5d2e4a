import { describe, expect, it } from "vitest";
import { TIERS, bucketStart, marketWide, rollup, tierFor, type Sample } from "./rollup.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function sample(at: number, over: Partial<Sample> = {}): Sample {
  return {
    resolution: 5,
    manager: "manager-1",
    at: new Date(at),
    machinesOpportunistic: 2,
    machinesDedicated: 0,
    slotsOpportunistic: 8,
    slotsDedicated: 0,
    utilisation: 0.5,
    queuedTasks: 10,
    runningTasks: 4,
    admissions: 1,
    delays: 0,
    rejections: 0,
    referencePrice: 1,
    chargedMicro: 0n,
    producerPaidMicro: 0n,
    profitMicro: 0n,
    ...over,
  };
}

describe("downsampling the market's history", () => {
  it("averages gauges, sums counts and keeps the last running totals of each minute", () => {
    const minute = Array.from({ length: 12 }, (_, i) =>
      sample(T0 + i * 5000, { queuedTasks: i, utilisation: i < 6 ? 0 : 1, admissions: 1, rejections: i === 3 ? 2 : 0, chargedMicro: BigInt(i * 100) }),
    );
    const [row, ...rest] = rollup(minute, 60, T0 + 60_000);
    expect(rest).toEqual([]);
    expect(row!.resolution).toBe(60);
    expect(row!.at.getTime()).toBe(T0);
    expect(row!.queuedTasks).toBeCloseTo(5.5);
    expect(row!.utilisation).toBeCloseTo(0.5);
    expect(row!.admissions).toBe(12);
    expect(row!.rejections).toBe(2);
    expect(row!.chargedMicro).toBe(1100n);
  });

  it("never writes a bucket that has not ended", () => {
    const samples = [sample(T0), sample(T0 + 30_000), sample(T0 + 65_000)];
    const rows = rollup(samples, 60, T0 + 70_000);
    expect(rows.map((r) => r.at.getTime())).toEqual([T0]);
  });

  it("averages the reference price only over samples that had one", () => {
    const rows = rollup([sample(T0, { referencePrice: null }), sample(T0 + 5000, { referencePrice: 4 }), sample(T0 + 10_000, { referencePrice: 2 })], 60, T0 + 60_000);
    expect(rows[0]!.referencePrice).toBe(3);
    expect(rollup([sample(T0, { referencePrice: null })], 60, T0 + 60_000)[0]!.referencePrice).toBeNull();
  });

  it("rolls coarser tiers from finer ones into the same buckets as rolling from raw", () => {
    const raw = Array.from({ length: 720 }, (_, i) => sample(T0 + i * 5000, { queuedTasks: i % 7, delays: i % 2 }));
    const minutes = rollup(raw, 60, T0 + 3_600_000);
    const quarters = rollup(minutes, 900, T0 + 3_600_000);
    const direct = rollup(raw, 900, T0 + 3_600_000);
    expect(quarters).toHaveLength(4);
    expect(quarters.map((q) => q.delays)).toEqual(direct.map((q) => q.delays));
    quarters.forEach((q, i) => expect(q.queuedTasks).toBeCloseTo(direct[i]!.queuedTasks));
  });

  it("reads each range from the finest tier that still holds it", () => {
    expect(tierFor(15 * 60_000).resolution).toBe(5);
    expect(tierFor(3_600_000).resolution).toBe(5);
    expect(tierFor(86_400_000).resolution).toBe(60);
    expect(tierFor(7 * 86_400_000).resolution).toBe(900);
    expect(tierFor(365 * 86_400_000).resolution).toBe(3600);
    expect(TIERS.map((t) => t.resolution)).toEqual([5, 60, 900, 3600]);
    expect(bucketStart(T0 + 59_999, 60)).toBe(T0);
  });
});

describe("the whole market's history from its managers'", () => {
  const two = (at: number, a: Partial<Sample>, b: Partial<Sample>) => [sample(at, { manager: "manager-1", ...a }), sample(at, { manager: "manager-2", ...b })];

  it("adds up the managers' machines, slots and tasks, and counts each one's decisions once", () => {
    const [row, ...rest] = marketWide(two(T0, { machinesOpportunistic: 3, slotsOpportunistic: 6, runningTasks: 6, utilisation: 1, admissions: 2 }, { machinesOpportunistic: 1, slotsOpportunistic: 2, runningTasks: 0, utilisation: 0, admissions: 1 }), 5);
    expect(rest).toEqual([]);
    expect(row).toMatchObject({ manager: "", machinesOpportunistic: 4, slotsOpportunistic: 8, runningTasks: 6, queuedTasks: 20, admissions: 3 });
    expect(row!.utilisation).toBeCloseTo(0.75);
  });

  it("takes the lowest reference price, a consumer's best offer", () => {
    expect(marketWide(two(T0, { referencePrice: 3 }, { referencePrice: 2 }), 5)[0]!.referencePrice).toBe(2);
    expect(marketWide(two(T0, { referencePrice: null }, { referencePrice: null }), 5)[0]!.referencePrice).toBeNull();
  });

  it("lets a manager's last sample stand for a missed moment, and not after it stopped", () => {
    const rows = [...two(T0, {}, {}), sample(T0 + 5000, { manager: "manager-1" }), sample(T0 + 60_000, { manager: "manager-1" })];
    expect(marketWide(rows, 5).map((r) => [r.at.getTime() - T0, r.machinesOpportunistic, r.admissions])).toEqual([
      [0, 4, 2],
      [5000, 4, 1],
      [60_000, 2, 1],
    ]);
  });
});
