import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { CALIBRATED_DEPARTURES, CALIBRATED_PROFILE } from "./profile.ts";
import { STATED_PROFILE, STATED_SOURCES } from "./stated.ts";
import { paperRun } from "./workload.ts";

/** Every field of a profile as [dotted path, value]; arrays are values. */
function leaves(o: object, prefix = ""): [string, unknown][] {
  return Object.entries(o).flatMap(([k, v]): [string, unknown][] =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? leaves(v as object, `${prefix}${k}.`) : [[`${prefix}${k}`, v]]);
}

describe("the stated profile is the paper's text", () => {
  it("has the paper's cost, cluster, arrivals, batches and run length", () => {
    expect(STATED_PROFILE.n).toBe(6);
    expect(STATED_PROFILE.cpuLoad).toBe("jobs");
    expect(STATED_PROFILE.workload).toMatchObject({ durationSeconds: 10_000, jobRate: [0.1, 0.1], batchFraction: 0.05, batchMax: 20, batchCpuFactor: 10 });
    const run = paperRun(createRng(1).fork("workload/0"), STATED_PROFILE);
    expect(run.machines.map((m) => m.speed)).toEqual([1, 1, 1, 0.665, 0.665, 0.45]);
    expect(run.machines.map((m) => m.memoryMb)).toEqual([64, 64, 64, 32, 32, 24]);
  });

  it("offers about 0.55 of the cluster's capacity at one job per 10 s", () => {
    const loads = Array.from({ length: 200 }, (_, r) => paperRun(createRng(1).fork(`workload/${r}`), STATED_PROFILE).offeredLoad);
    const mean = loads.reduce((a, x) => a + x, 0) / loads.length;
    expect(mean).toBeGreaterThan(0.5);
    expect(mean).toBeLessThan(0.6);
  });

  it("names the source of every field once: the paper's text, or an assumption where it is silent", () => {
    const fields = leaves(STATED_PROFILE).map(([p]) => p).sort();
    expect(STATED_SOURCES.map((s) => s.path).sort()).toEqual(fields);
    for (const s of STATED_SOURCES) expect(s.why.length).toBeGreaterThan(10);
  });
});

describe("the calibrated profile", () => {
  it("departs from the stated one in exactly the fields it lists as fitted", () => {
    const stated = new Map(leaves(STATED_PROFILE).map(([p, v]) => [p, JSON.stringify(v)]));
    const differ = leaves(CALIBRATED_PROFILE).filter(([p, v]) => stated.get(p) !== JSON.stringify(v)).map(([p]) => p);
    expect(differ.sort()).toEqual([...CALIBRATED_DEPARTURES].sort());
  });
});
