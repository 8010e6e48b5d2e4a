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

  it("waits while copies are still out, and runs them all again once none agree", () => {
    const split = [
      { hash: "a", owner: "ann" },
      { hash: "b", owner: "bob" },
    ];
    expect(tallyCopies(split, 2, true).rerun).toBe(false);
    expect(tallyCopies(split, 2, false).rerun).toBe(true);
  });
});
