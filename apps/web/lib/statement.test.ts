import { describe, expect, it } from "vitest";
import { describeLine, type StatementLine } from "./statement";

// A producer's statement line for a group's payment (one entry per job and producer, its tasks'
// pieces summed) must still say what each task paid, from the entry's memo.

const line = (memo: unknown, amount: number): StatementLine => ({ at: 0, account: "producer", kind: "payment", jobId: "job-1", jobName: "pi", ownJob: false, amount, memo }) as StatementLine;

describe("a payment line", () => {
  it("names how many tasks a group's payment paid and at which piece rates", () => {
    const words = describeLine(line({ of: "result", tasks: 3, machineIds: ["machine-a"], rates: [["400", 2], ["2000", 1]] }, 0.0028));
    expect(words.what).toBe("Payment for 3 tasks of job pi");
    expect(words.detail).toContain("3 accepted results");
    expect(words.detail).toContain("2 at 0.0004 cr");
    expect(words.detail).toContain("1 at 0.002 cr");
  });

  it("reads one task's payment as it always did", () => {
    const group = describeLine(line({ of: "result", tasks: 1, machineIds: ["machine-a"], rates: [["400", 1]] }, 0.0004));
    const alone = describeLine(line({ of: "result", machineId: "machine-a" }, 0.0004));
    expect(group.what).toBe(alone.what);
    expect(group.detail).toContain("1 at 0.0004 cr");
  });
});
