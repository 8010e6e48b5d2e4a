import { describe, expect, it } from "vitest";
import { wholeCharged, wholeStatus, wholeSummary, type PartRow } from "./split-view.ts";

// What a consumer sees of a job split across managers: one status, one spend, one count of tasks.

const part = (status: string, over: Partial<PartRow> = {}): PartRow => ({
  id: `p-${status}`,
  managerId: "manager-1",
  taskOffset: 0,
  taskCount: 2,
  tasksDone: 0,
  status,
  quotedPriceMicro: 1_000_000n,
  chargedMicro: null,
  completedAt: null,
  ...over,
});

describe("a split job as its consumer sees it", () => {
  it("runs while any part runs, completes when all did, else ends as its worst part", () => {
    expect(wholeStatus([])).toBe("admitted");
    expect(wholeStatus([part("admitted"), part("admitted")])).toBe("admitted");
    expect(wholeStatus([part("completed"), part("admitted", { tasksDone: 1 })])).toBe("running");
    expect(wholeStatus([part("completed"), part("completed")])).toBe("completed");
    expect(wholeStatus([part("completed"), part("failed")])).toBe("failed");
    expect(wholeStatus([part("completed"), part("cancelled")])).toBe("cancelled");
  });

  it("is charged the sum of its parts' settlements, and nothing is shown before all are settled", () => {
    expect(wholeCharged([part("completed", { chargedMicro: 1_500_000n }), part("running")])).toBeNull();
    expect(wholeCharged([part("completed", { chargedMicro: 1_500_000n }), part("completed", { chargedMicro: 250_000n })])).toBe(1_750_000n);
  });

  it("lists one job with every part's tasks done and the latest part's completion", () => {
    const done = [
      part("completed", { tasksDone: 2, chargedMicro: 1_000_000n, completedAt: new Date(5_000) }),
      part("completed", { taskOffset: 2, tasksDone: 2, chargedMicro: 2_000_000n, completedAt: new Date(9_000) }),
    ];
    const row = { id: "w", status: "split", tasksDone: 0, completedAt: null, charged: null };
    expect(wholeSummary(row, done)).toEqual({ id: "w", status: "completed", tasksDone: 4, completedAt: 9_000, charged: 3 });
  });
});
