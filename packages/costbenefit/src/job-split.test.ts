import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { benefitAt } from "./benefit.ts";
import { MAX_SPLIT_PARTS, checkSplit, partBenefit, splitByRoom } from "./job-split.ts";

describe("splitByRoom", () => {
  it("gives each manager its share of the tasks in proportion to its room, contiguous", () => {
    expect(splitByRoom(10, [{ manager: "a", room: 2 }, { manager: "b", room: 3 }])).toEqual([
      { manager: "a", fromTask: 0, tasks: 4 },
      { manager: "b", fromTask: 4, tasks: 6 },
    ]);
  });

  it("leaves out managers without room and does not split a job one manager would hold alone", () => {
    expect(splitByRoom(8, [{ manager: "a", room: 0 }, { manager: "b", room: 4 }])).toEqual([]);
    expect(splitByRoom(1, [{ manager: "a", room: 4 }, { manager: "b", room: 4 }])).toEqual([]);
    expect(splitByRoom(3, [{ manager: "a", room: 1 }, { manager: "b", room: 1000 }])).toEqual([]);
  });

  it("always covers every task once, in at most MAX_SPLIT_PARTS parts", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 30 }), (n, rooms) => {
        const parts = splitByRoom(n, rooms.map((room, i) => ({ manager: `m${i}`, room })));
        if (parts.length === 0) return;
        expect(parts.length).toBeLessThanOrEqual(MAX_SPLIT_PARTS);
        expect(checkSplit(n, parts)).toBeNull();
      }),
    );
  });
});

describe("partBenefit", () => {
  it("scales every curve's values by the part's share, so the parts add up to the whole", () => {
    const curves = [
      { kind: "constant" as const, value: 90 },
      { kind: "deadline" as const, value: 90, deadline: 60, penalty: -30 },
      { kind: "linear-decay" as const, value: 90, start: 10, end: 100, floor: 9 },
      { kind: "piecewise" as const, points: [{ t: 0, value: 90 }, { t: 50, value: 30 }] },
    ];
    for (const c of curves)
      for (const t of [0, 30, 60, 120]) {
        const sum = benefitAt(partBenefit(c, 1, 3), t) + benefitAt(partBenefit(c, 2, 3), t);
        expect(sum).toBeCloseTo(benefitAt(c, t), 9);
      }
  });
});

describe("checkSplit", () => {
  it("refuses parts that leave a gap, overlap or miss the end", () => {
    expect(checkSplit(10, [{ manager: "a", fromTask: 0, tasks: 4 }, { manager: "b", fromTask: 5, tasks: 5 }])).toMatch(/in order/);
    expect(checkSplit(10, [{ manager: "a", fromTask: 0, tasks: 4 }, { manager: "b", fromTask: 4, tasks: 5 }])).toMatch(/10 tasks, not 9/);
    expect(checkSplit(10, [{ manager: "a", fromTask: 0, tasks: 10 }])).toMatch(/2 to/);
  });
});
