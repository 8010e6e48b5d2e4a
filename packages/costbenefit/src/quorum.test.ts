import { describe, expect, it } from "vitest";
import { copyConflict, maxCopies, quorumOf, verifyCopies, type CopyVote } from "./quorum.ts";

const v = (hash: string, owner: string, standing = true, verifier?: string): CopyVote => ({ hash, owner, standing, ...(verifier ? { verifier } : {}) });
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

  it("a spot-checked result needs a second account's agreement; a forger with standing is then outvoted, never by one account alone", () => {
    expect(verdict([v("forged", "ann")], 1, { checked: true })).toMatchObject({ agreed: null, addCopy: true });
    const contest = [v("forged", "ann"), v("real", "bob")];
    expect(verdict(contest, 1, { checked: true })).toMatchObject({ agreed: null, addCopy: true });
    const settled = verdict([...contest, v("real", "cy")], 1, { checked: true, copies: 3 });
    expect(settled).toMatchObject({ agreed: "real", forgers: ["ann"], disagreed: ["ann"] });
    expect(settled.verified.sort()).toEqual(["bob", "cy"]);
  });

  it("a task whose copies never settle runs again once it has all the copies it may have", () => {
    const split = [v("a", "ann"), v("b", "bob"), v("c", "cy"), v("d", "dan")];
    expect(verdict(split, 1, { copies: maxCopies(1), checked: true })).toMatchObject({ agreed: null, addCopy: false, rerun: true });
  });

  it("judges a late copy against the output agreed before it", () => {
    const r = verifyCopies({ votes: [v("real", "ann"), v("real", "bob"), v("forged", "late")], replicas: 3, copies: 3, copiesOut: false, checked: false, agreedBefore: "real" });
    expect(r).toMatchObject({ agreed: "real", disagreed: ["late"], forgers: ["late"] });
  });

  it("waits while copies are out", () => {
    expect(verdict([v("h", "fresh", false)], 2, { copies: 2, copiesOut: true })).toMatchObject({ agreed: null, addCopy: false, rerun: false });
  });
});
