import { describe, expect, it } from "vitest";
import { timeTicks } from "./time-ticks";

const at = (...parts: [number, number, number, number, number, number]) => new Date(...parts).getTime() / 1000;

describe("timeTicks", () => {
  it("labels each tick on one line, with seconds only when ticks are seconds apart", () => {
    expect(timeTicks([at(2026, 10, 29, 11, 55, 0), at(2026, 10, 29, 11, 55, 30)])).toEqual(["11:55:00am", "11:55:30am"]);
    expect(timeTicks([at(2026, 10, 29, 11, 55, 0), at(2026, 10, 29, 12, 0, 0), at(2026, 10, 29, 12, 5, 0)])).toEqual(["11:55am", "12:00pm", "12:05pm"]);
    expect(timeTicks([at(2026, 10, 29, 22, 0, 0), at(2026, 10, 30, 0, 0, 0), at(2026, 10, 30, 2, 0, 0)])).toEqual(["10:00pm", "Nov 30", "2:00am"]);
    expect(timeTicks([at(2026, 10, 29, 0, 0, 0), at(2026, 10, 30, 0, 0, 0)])).toEqual(["Nov 29", "Nov 30"]);
    expect(timeTicks([at(2026, 10, 29, 0, 30, 0)])).toEqual(["12:30am"]);
  });
});
