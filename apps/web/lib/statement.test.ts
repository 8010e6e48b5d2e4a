import { describe, expect, it } from "vitest";
import { describeLine, earnedShareWords, type StatementLine } from "./statement";

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

describe("a producer's share of what its work sold for", () => {
  it("says the rest is the market's charge and fee when less than all of it reached the producer", () => {
    expect(earnedShareWords(10, 8)).toContain("you were paid 8 cr of it (80%). The rest is the market's congestion charge and fee.");
  });

  it("does not call more than all of it a share: the market paid the difference", () => {
    const words = earnedShareWords(21.651, 36.155);
    expect(words).not.toContain("of it");
    expect(words).not.toContain("The rest is");
    expect(words).toContain("(167% of that): the market paid the difference");
  });
});
