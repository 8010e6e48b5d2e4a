import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { addedCopyPiece, contestPieces, copyConflict, copyPieces, maxCopies, quorumOf, verifyCopies, type CopyVote, type JudgedCopy } from "./quorum.ts";

const v = (hash: string, owner: string, standing = true, verifier?: string): CopyVote => ({ hash, owner, standing, ...(verifier ? { verifier } : {}) });
/** A copy verification added (a check, a spot check, a tie-break): it votes as any other. */
const added = v;
const verdict = (votes: CopyVote[], replicas: number, more: { copies?: number; copiesOut?: boolean; checked?: boolean } = {}) =>
  verifyCopies({ votes, replicas, copies: more.copies ?? Math.max(votes.length, replicas), copiesOut: more.copiesOut ?? false, checked: more.checked ?? false });

describe("verification that standing decides", () => {
  it("needs a strict majority of the consumer's copies", () => {
    expect([1, 2, 3, 4, 5].map(quorumOf)).toEqual([1, 2, 2, 3, 3]);
  });

  it("accepts a single copy from an account with standing at once", () => {
    expect(verdict([v("h", "ann")], 1)).toMatchObject({ agreed: "h", owners: 1, addCopy: false, verified: [] });
  });

  it("never accepts a result from accounts without standing alone: it asks for a copy on one that has it", () => {
    expect(verdict([v("h", "fresh", false)], 1)).toMatchObject({ agreed: null, addCopy: true, rerun: false });
    const agreed = verdict([v("h", "fresh", false), v("h", "ann")], 1, { checked: true });
    expect(agreed).toMatchObject({ agreed: "h", owners: 2, verified: ["fresh"], forgers: [] });
  });

  it("two fresh accounts forging a 3-copy job get nothing accepted, and are caught once two accounts with standing agree", () => {
    const forged = [v("forged", "f1", false), v("forged", "f2", false), v("real", "h1", false)];
    expect(verdict(forged, 3)).toMatchObject({ agreed: null, addCopy: true });
    expect(verdict([...forged, v("real", "ann")], 3, { copies: 4 })).toMatchObject({ agreed: null, addCopy: true });
    const done = verdict([...forged, v("real", "ann"), v("real", "bob")], 3, { copies: 5 });
    expect(done).toMatchObject({ agreed: "real", support: 2, forgers: ["f1", "f2"] });
    expect(done.verified.sort()).toEqual(["ann", "bob", "h1"]);
  });

  it("counts one organisation's accounts once: two accounts of one confirmed domain are not a quorum of three", () => {
    const votes = [v("forged", "a1", true, "domain:corp.test"), v("forged", "a2", true, "domain:corp.test"), v("real", "bob")];
    expect(verdict(votes, 3)).toMatchObject({ agreed: null, addCopy: true });
  });

  it("counts one known network's accounts once: two accounts with standing behind one /24 are not a quorum of three", () => {
    const net = (hash: string, owner: string, network: string | null): CopyVote => ({ hash, owner, standing: true, network });
    expect(verdict([net("forged", "a1", "203.0.113.0/24"), net("forged", "a2", "203.0.113.0/24"), net("real", "bob", "198.51.100.0/24")], 3)).toMatchObject({ agreed: null, addCopy: true });
    // Where the network is not known (a private or loopback address), accounts count as themselves.
    expect(verdict([net("h", "a1", null), net("h", "a2", null)], 3)).toMatchObject({ agreed: "h", support: 2 });
    // Nor is a copy placed on a machine of a network that ran one already.
    const ranBy = [{ owner: "a1", machine: "m1", network: "203.0.113.0/24" }];
    expect(copyConflict({ id: "m2", owner: "a2", network: "203.0.113.0/24", standing: true }, { added: false, ranBy })).toEqual(ranBy[0]);
    expect(copyConflict({ id: "m3", owner: "a3", network: "198.51.100.0/24", standing: true }, { added: false, ranBy })).toBeNull();
    expect(copyConflict({ id: "m4", owner: "a4", network: null, standing: true }, { added: false, ranBy: [{ owner: "a1", machine: "m1", network: null }] })).toBeNull();
  });

  it("counts one owner's machines once", () => {
    expect(verdict([v("forged", "ann"), v("forged", "ann")], 3, { copies: 3, copiesOut: true })).toMatchObject({ agreed: null, addCopy: false, rerun: false });
  });

  it("a spot-checked result needs a second account's agreement; a forger with standing is then outvoted by a margin of two, never by one account alone", () => {
    expect(verdict([v("forged", "ann")], 1, { checked: true })).toMatchObject({ agreed: null, addCopy: true });
    const contest = [v("forged", "ann"), added("real", "bob")];
    expect(verdict(contest, 1, { checked: true })).toMatchObject({ agreed: null, addCopy: true });
    expect(verdict([...contest, added("real", "cy")], 1, { checked: true, copies: 3 })).toMatchObject({ agreed: null, addCopy: true });
    const settled = verdict([...contest, added("real", "cy"), added("real", "dan")], 1, { checked: true, copies: 4 });
    expect(settled).toMatchObject({ agreed: "real", forgers: ["ann"], disagreed: ["ann"] });
    expect(settled.verified.sort()).toEqual(["bob", "cy", "dan"]);
  });

  it("two accounts of one person with standing neither outvote an honest one with a drawn copy nor brand it", () => {
    // The consumer's two copies disagree; the tie-break drawn is the person's second account.
    const tie = [v("forged", "p1"), v("real", "honest"), added("forged", "p2")];
    expect(verdict(tie, 2, { copies: 3 })).toMatchObject({ agreed: null, addCopy: true, forgers: [] });
    expect(verdict([...tie, added("real", "h2"), added("real", "h3")], 2, { copies: 5 })).toMatchObject({ agreed: null, addCopy: true });
    // Honest copies drawn after it settle it once they lead by two, and it is the pair that is caught.
    const settled = verdict([...tie, added("real", "h2"), added("real", "h3"), added("real", "h4")], 2, { copies: 6 });
    expect(settled).toMatchObject({ agreed: "real", forgers: ["p1", "p2"], standingForger: true });
  });

  it("settles a contest between accounts with standing only on a margin of two, and brands only on it", () => {
    // Two of the consumer's three copies agree against an account with standing: more copies.
    expect(verdict([v("real", "honest"), v("forged", "p1"), v("forged", "p2")], 3)).toMatchObject({ agreed: null, addCopy: true, forgers: [] });
    // Three against one is a margin of two: the one is caught forging.
    expect(verdict([v("forged", "f"), v("real", "a"), v("real", "b"), v("real", "c")], 4)).toMatchObject({ agreed: "real", forgers: ["f"] });
    // Agreed first, an account with standing reporting otherwise after is only a disagreement.
    const late = verifyCopies({ votes: [v("forged", "p1"), v("forged", "p2"), v("real", "honest")], replicas: 3, copies: 3, copiesOut: false, checked: false, agreedBefore: "forged" });
    expect(late).toMatchObject({ agreed: "forged", disagreed: ["honest"], forgers: [] });
  });

  it("a task whose copies never settle runs again once it has all the copies it may have", () => {
    const split = [v("a", "ann"), v("b", "bob"), v("c", "cy"), v("d", "dan")];
    expect(verdict(split, 1, { copies: maxCopies(1), checked: true })).toMatchObject({ agreed: null, addCopy: false, rerun: true });
  });

  it("judges a late copy against the output agreed before it", () => {
    const r = verifyCopies({ votes: [v("real", "ann"), v("real", "bob"), v("forged", "late", false)], replicas: 3, copies: 3, copiesOut: false, checked: false, agreedBefore: "real" });
    expect(r).toMatchObject({ agreed: "real", disagreed: ["late"], forgers: ["late"] });
  });

  it("waits while copies are out", () => {
    expect(verdict([v("h", "fresh", false)], 2, { copies: 2, copiesOut: true })).toMatchObject({ agreed: null, addCopy: false, rerun: false });
  });
});

describe("what the copies of a task are paid", () => {
  const copy = (replica: number, piece: number, more: Partial<JudgedCopy> = {}): JudgedCopy => ({ replica, piece: BigInt(piece), agrees: true, forfeited: false, standing: true, ...more });

  it("pays a contest a forger with standing made in full as far as its forfeit covers, the market paying past the task's budget", () => {
    // A forged, H honest, B forged alike (the tie-break), then three honest checks: 4 against 2.
    const votes = [v("forged", "A"), v("real", "H"), added("forged", "B"), added("real", "E1"), added("real", "E2"), added("real", "E3")];
    const verdict6 = verdict(votes, 2, { copies: 6 });
    expect(verdict6).toMatchObject({ agreed: "real", forgers: ["A", "B"], standingForger: true });
    const copies = [copy(0, 50, { agrees: false }), copy(1, 50), copy(2, 50, { agrees: false }), copy(3, 50), copy(4, 50), copy(5, 50)];
    // The task's share is 111: the budget alone would leave the honest copy unpaid.
    expect(copyPieces(copies, 2, 111n)).toEqual([0n, 0n, 0n, 50n, 50n, 11n]);
    // The budget pays the honest consumer's copy first, then the checks in order; past it the market pays what the forgers forfeited: 89 here.
    const contest = contestPieces(copies, 2, 111n, undefined, 89n);
    expect(contest.pieces).toEqual([0n, 50n, 0n, 50n, 50n, 50n]);
    expect(contest.fromMarket).toEqual([0n, 0n, 0n, 0n, 39n, 50n]);
    // The market pays past the budget no more than the forfeit brought it: forgers that were paid nothing make it pay nothing.
    expect(contestPieces(copies, 2, 111n, undefined, 60n)).toEqual({ pieces: [0n, 50n, 0n, 50n, 50n, 21n], fromMarket: [0n, 0n, 0n, 0n, 39n, 21n] });
    expect(contestPieces(copies, 2, 111n)).toEqual({ pieces: [0n, 50n, 0n, 50n, 11n, 0n], fromMarket: [0n, 0n, 0n, 0n, 0n, 0n] });
    // A consumer's copy of an account without standing gives way to the checks, as in copyPieces.
    const fresh = [copy(0, 50, { agrees: false }), copy(1, 50, { standing: false }), copy(2, 50), copy(3, 50), copy(4, 50)];
    expect(contestPieces(fresh, 2, 111n).pieces).toEqual([0n, 0n, 50n, 50n, 11n]);
    // A fresh account's forgery is settled within the budget: no contest for the market to pay.
    expect(verdict([v("forged", "fresh", false), added("real", "E1"), added("real", "E2")], 1, { copies: 3, checked: true })).toMatchObject({ forgers: ["fresh"], standingForger: false });
  });

  it("pays the consumer's copies their pieces when nothing was added", () => {
    expect(copyPieces([copy(0, 100), copy(1, 80), copy(2, 90, { agrees: false })], 3, 400n)).toEqual([100n, 80n, 0n]);
  });

  it("pays a check from the quote's margin first, then out of the run it checks, never past the task's share", () => {
    // The task's share of the quote is 120 and its run was leased for 100: the margin pays 20 of the check.
    expect(copyPieces([copy(0, 100, { standing: false }), copy(1, 30)], 1, 120n)).toEqual([90n, 30n]);
    expect(copyPieces([copy(0, 100, { standing: false }), copy(1, 15)], 1, 120n)).toEqual([100n, 15n]);
    // A check asking a great deal is paid the rest of the task's share and no more; the run it checked earns nothing.
    expect(copyPieces([copy(0, 1, { standing: false }), copy(1, 100_000_000)], 1, 6n)).toEqual([0n, 6n]);
  });

  it("pays a tie-break from the piece of the copy it proved wrong first", () => {
    // The consumer's copy lied and two checks agreed on the truth: the lie's piece pays both checks as far as it goes.
    expect(copyPieces([copy(0, 100, { agrees: false, standing: false }), copy(1, 60), copy(2, 60)], 1, 0n)).toEqual([0n, 60n, 40n]);
    // Of the consumer's two copies, the fresh account's pays for the check before the one with standing.
    expect(copyPieces([copy(0, 50), copy(1, 50, { standing: false }), copy(2, 70)], 2, 100n)).toEqual([30n, 0n, 70n]);
  });

  it("pays a copy judged after its task was decided only from what the task's budget still holds, and a forger nothing", () => {
    // Two checks decided a task whose share is 100 and took it all: a third check reporting late is paid nothing.
    expect(copyPieces([copy(1, 1_000), copy(2, 1_000)], 1, 100n)).toEqual([100n, 0n]);
    expect(copyPieces([copy(3, 1_000)], 1, 100n, { leased: 0n, paid: 100n })).toEqual([0n]);
    // ... and the consumer's own copy, rerun and reported after them, nothing either.
    expect(copyPieces([copy(0, 30, { standing: false })], 1, 100n, { leased: 0n, paid: 100n })).toEqual([0n]);
    // The third of a consumer's three copies, after two decided, is paid its piece.
    expect(copyPieces([copy(2, 30)], 3, 200n, { leased: 60n, paid: 60n })).toEqual([30n]);
    expect(copyPieces([copy(0, 100, { forfeited: true }), copy(1, 40)], 1, 0n)).toEqual([0n, 40n]);
  });

  it("never pays a task's copies more than its share of the quote or its consumer's copies' pieces, whatever the checks ask and whenever they report", () => {
    const copies = fc.array(fc.record({ replica: fc.nat(6), piece: fc.bigInt(0n, 10n ** 9n), agrees: fc.boolean(), forfeited: fc.boolean(), standing: fc.boolean() }), { maxLength: 8 });
    fc.assert(
      fc.property(copies, fc.integer({ min: 1, max: 4 }), fc.bigInt(0n, 10n ** 9n), fc.bigInt(0n, 10n ** 9n), fc.bigInt(0n, 10n ** 9n), (cs, replicas, share, earlierLeased, earlierPaid) => {
        const out = copyPieces(cs, replicas, share, { leased: earlierLeased, paid: earlierPaid });
        const leased = cs.filter((c) => c.replica < replicas).reduce((s, c) => s + c.piece, earlierLeased);
        const budget = (leased > share ? leased : share) - earlierPaid;
        expect(out.reduce((s, p) => s + p, 0n)).toBeLessThanOrEqual(budget > 0n ? budget : 0n);
        cs.forEach((c, i) => {
          expect(out[i]).toBeGreaterThanOrEqual(0n);
          expect(out[i]).toBeLessThanOrEqual(c.piece);
          if (!c.agrees || c.forfeited) expect(out[i]).toBe(0n);
        });
        // Without checks or earlier pay, the consumer's agreeing copies are paid in full.
        if (earlierPaid === 0n && cs.every((c) => c.replica < replicas)) cs.forEach((c, i) => expect(out[i]).toBe(c.agrees && !c.forfeited ? c.piece : 0n));
      }),
    );
  });

  it("states on a check's lease at most the task's budget", () => {
    expect(addedCopyPiece(500n, [20n, 30n], 10n)).toBe(50n);
    expect(addedCopyPiece(500n, [20n], 60n)).toBe(60n);
    expect(addedCopyPiece(10n, [20n], 0n)).toBe(10n);
    expect(addedCopyPiece(10n, [], 0n)).toBe(0n);
  });
});
