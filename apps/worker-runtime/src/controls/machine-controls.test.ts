import { describe, expect, it } from "vitest";
import { DEFAULT_CONTROLS, MachineControls, MachineControlsPatch, offReason, readControls } from "./machine-controls.ts";

describe("a machine's controls", () => {
  it("default to a machine that works whenever it is in the market", () => {
    expect(DEFAULT_CONTROLS).toEqual({ paused: false, handBack: "finish", cpuLimit: 100, onlyIdle: false, idleLoad: 0.3, schedule: null, maxTaskMemoryMb: null });
    expect(offReason(DEFAULT_CONTROLS, { inSchedule: true, ownerIdle: false })).toBeNull();
  });

  it("say why the capacity is off: paused first, then the schedule, then the owner's use", () => {
    const c = MachineControls.parse({ paused: true, onlyIdle: true });
    expect(offReason(c, { inSchedule: false, ownerIdle: false })).toBe("paused");
    expect(offReason({ ...c, paused: false }, { inSchedule: false, ownerIdle: false })).toBe("schedule");
    expect(offReason({ ...c, paused: false }, { inSchedule: true, ownerIdle: false })).toBe("in-use");
    expect(offReason({ ...c, paused: false }, { inSchedule: true, ownerIdle: null })).toBeNull();
  });

  it("refuse bad values with the limit in words, and read stored values leniently", () => {
    const bad = MachineControlsPatch.safeParse({ cpuLimit: 0, schedule: "Moonday 10:00-11:00" });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.message)).toEqual(["The CPU limit is at least 1%.", expect.stringContaining("is not a day")]);
    expect(MachineControlsPatch.parse({ paused: true })).toEqual({ paused: true });
    expect(readControls({ paused: true, cpuLimit: 500 })).toMatchObject({ paused: true, cpuLimit: 100 });
    expect(readControls(null)).toEqual(DEFAULT_CONTROLS);
  });
});
