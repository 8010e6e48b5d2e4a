import { describe, expect, it } from "vitest";
import { inSchedule, minutesToNextChange, parseSchedule } from "./schedule.ts";

// Local times on known weekdays: 2026-11-23 is a Monday.
const at = (day: number, hh: number, mm = 0) => new Date(2026, 10, 23 + day, hh, mm);
const MON = 0, TUE = 1, FRI = 4, SAT = 5, SUN = 6;

describe("a weekly schedule", () => {
  it("runs an evening range past midnight into the next morning", () => {
    const s = "Mon-Fri 18:00-08:00";
    expect(inSchedule(s, at(MON, 17, 59))).toBe(false);
    expect(inSchedule(s, at(MON, 18, 0))).toBe(true);
    expect(inSchedule(s, at(TUE, 7, 59))).toBe(true);
    expect(inSchedule(s, at(TUE, 8, 0))).toBe(false);
    // Friday evening's range ends on Saturday morning; Sunday evening is not listed.
    expect(inSchedule(s, at(SAT, 7, 0))).toBe(true);
    expect(inSchedule(s, at(SAT, 12, 0))).toBe(false);
    expect(inSchedule(s, at(SUN, 20, 0))).toBe(false);
  });

  it("wraps past Sunday midnight into Monday, and takes several entries, day lists and names", () => {
    expect(inSchedule("Sun 22:00-02:00", at(MON, 1, 0))).toBe(true);
    expect(inSchedule("Sun 22:00-02:00", at(MON, 2, 0))).toBe(false);
    const s = "weekdays 12:00-13:00; Sat,Sun 00:00-24:00";
    expect(inSchedule(s, at(SAT, 3, 0))).toBe(true);
    expect(inSchedule(s, at(FRI, 12, 30))).toBe(true);
    expect(inSchedule(s, at(FRI, 14, 0))).toBe(false);
    expect(inSchedule("Fri-Mon 09:00-10:00", at(SUN, 9, 30))).toBe(true);
    expect(inSchedule("Fri-Mon 09:00-10:00", at(TUE, 9, 30))).toBe(false);
    expect(inSchedule(null, at(TUE, 9, 30))).toBe(true);
  });

  it("says how long until it next switches", () => {
    expect(minutesToNextChange("Mon-Fri 18:00-08:00", at(MON, 17, 0))).toBe(60);
    expect(minutesToNextChange("daily 00:00-24:00", at(MON, 17, 0))).toBeNull();
  });

  it("refuses what it cannot read, naming the entry and the part", () => {
    expect(parseSchedule("Mon-Fry 18:00-08:00")).toEqual({ ok: false, message: expect.stringContaining('"Fry" is not a day') });
    expect(parseSchedule("Mon 25:00-08:00")).toEqual({ ok: false, message: expect.stringContaining("is not a time range") });
    expect(parseSchedule("Mon 08:00-08:00")).toEqual({ ok: false, message: expect.stringContaining("same time") });
    expect(parseSchedule("")).toEqual({ ok: false, message: expect.stringContaining("at least one entry") });
    expect(parseSchedule("Mon 08:00-09:00;".repeat(20))).toEqual({ ok: false, message: expect.stringContaining("at most") });
  });
});
