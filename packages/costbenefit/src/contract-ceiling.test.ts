import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { contractCeiling, NEW_ACCOUNT_CEILING, CONFIRMED_CEILING } from "./contract-ceiling.ts";

describe("contractCeiling", () => {
  it("gives a new account a small amount, and more for each verified fact", () => {
    expect(contractCeiling({ verifiedResults: 0, confirmed: false, ageDays: 0 })).toBe(NEW_ACCOUNT_CEILING);
    expect(contractCeiling({ verifiedResults: 0, confirmed: true, ageDays: 0 })).toBe(NEW_ACCOUNT_CEILING + CONFIRMED_CEILING);
    expect(contractCeiling({ verifiedResults: 1000, confirmed: true, ageDays: 30 })).toBeCloseTo(110);
  });

  it("counts little of results piled up by a fresh account", () => {
    const fresh = contractCeiling({ verifiedResults: 100_000, confirmed: true, ageDays: 0 });
    const old = contractCeiling({ verifiedResults: 100_000, confirmed: true, ageDays: 60 });
    expect(fresh).toBe(NEW_ACCOUNT_CEILING + CONFIRMED_CEILING);
    expect(old).toBeGreaterThan(fresh * 100);
  });

  it("never falls as an account earns a fact, and is always a finite positive amount (property)", () => {
    const facts = fc.record({ verifiedResults: fc.double({ noNaN: false }), confirmed: fc.boolean(), ageDays: fc.double({ noNaN: false }) });
    fc.assert(
      fc.property(facts, fc.nat(1000), fc.nat(100), (f, more, older) => {
        const c = contractCeiling(f);
        expect(Number.isFinite(c) && c >= NEW_ACCOUNT_CEILING).toBe(true);
        const base = { verifiedResults: Math.max(0, Number.isFinite(f.verifiedResults) ? Math.min(f.verifiedResults, 1e6) : 0), ageDays: Math.max(0, Number.isFinite(f.ageDays) ? Math.min(f.ageDays, 1e3) : 0), confirmed: f.confirmed };
        const b = contractCeiling(base);
        expect(contractCeiling({ ...base, verifiedResults: base.verifiedResults + more })).toBeGreaterThanOrEqual(b);
        expect(contractCeiling({ ...base, ageDays: base.ageDays + older })).toBeGreaterThanOrEqual(b);
        expect(contractCeiling({ ...base, confirmed: true })).toBeGreaterThanOrEqual(b);
      }),
    );
  });
});
