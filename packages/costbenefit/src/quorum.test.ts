import { describe, expect, it } from "vitest";
import { quorumOf, tallyCopies } from "./quorum.ts";

describe("verification by a quorum of owners", () => {
  it("needs a strict majority of the copies", () => {
    expect([1, 2, 3, 4, 5].map(quorumOf)).toEqual([1, 2, 2, 3, 3]);
  });

  it("accepts a single copy's output at once", () => {
    expect(tallyCopies([{ hash: "h", owner: "ann" }], 1, false)).toEqual({ agreed: "h", owners: 1, rerun: false });
  });

  it("agrees when a majority of different owners report the same output", () => {
    const votes = [
      { hash: "h", owner: "ann" },
      { hash: "x", owner: "bob" },
      { hash: "h", owner: "cy" },
    ];
    expect(tallyCopies(votes, 3, false)).toEqual({ agreed: "h", owners: 2, rerun: false });
  });

  it("counts one owner's machines once: two of ann's machines are not a quorum of three", () => {
    const votes = [
      { hash: "forged", owner: "ann" },
      { hash: "forged", owner: "ann" },
    ];
    expect(tallyCopies(votes, 3, true)).toEqual({ agreed: null, owners: 0, rerun: false });
    expect(tallyCopies([...votes, { hash: "real", owner: "bob" }], 3, false)).toEqual({ agreed: null, owners: 0, rerun: true });
  });

  it("needs an owner with standing in the quorum: two fresh accounts agreeing are no proof", () => {
    const fresh = [
      { hash: "forged", owner: "sybil-1", standing: false },
      { hash: "forged", owner: "sybil-2", standing: false },
    ];
    expect(tallyCopies(fresh, 3, true)).toEqual({ agreed: null, owners: 0, rerun: false });
    expect(tallyCopies([...fresh, { hash: "real", owner: "ann", standing: true }], 3, false).agreed).toBeNull();
    // One owner with standing agreeing makes it a quorum.
    expect(tallyCopies([fresh[0]!, { hash: "forged", owner: "ann", standing: true }], 3, true)).toEqual({ agreed: "forged", owners: 2, rerun: false });
    // A task without copies is judged as before (its owner's standing is not a quorum's question).
    expect(tallyCopies([fresh[0]!], 1, false).agreed).toBe("forged");
  });

  it("waits while copies are still out, and runs them all again once none agree", () => {
    const split = [
      { hash: "a", owner: "ann" },
      { hash: "b", owner: "bob" },
    ];
    expect(tallyCopies(split, 2, true).rerun).toBe(false);
    expect(tallyCopies(split, 2, false).rerun).toBe(true);
  });
});
