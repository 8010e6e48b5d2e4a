import { describe, expect, it } from "vitest";
import { contractCeiling, contractOverStanding, CONTRACT_CEILING_AGE_DAYS, CONTRACT_CEILING_CONFIRMED, CONTRACT_CEILING_NEW, CONTRACT_CEILING_PER_RESULT } from "./purchase.ts";

const fresh = { confirmed: false, verifiedResults: 0, ageDays: 0, forged: false };

describe("what the market may promise one account in contracts", () => {
  it("is small for a new account, more once it confirmed its address, and grows with verified results as the account ages", () => {
    expect(contractCeiling(fresh)).toBe(CONTRACT_CEILING_NEW);
    expect(contractCeiling({ ...fresh, confirmed: true })).toBe(CONTRACT_CEILING_NEW + CONTRACT_CEILING_CONFIRMED);
    // Results piled up on the first day count for almost nothing; a month later in full.
    expect(contractCeiling({ ...fresh, confirmed: true, verifiedResults: 1000 })).toBe(10);
    expect(contractCeiling({ ...fresh, confirmed: true, verifiedResults: 1000, ageDays: CONTRACT_CEILING_AGE_DAYS / 2 })).toBeCloseTo(10 + 1000 * CONTRACT_CEILING_PER_RESULT * 0.5, 9);
    expect(contractCeiling({ ...fresh, confirmed: true, verifiedResults: 1000, ageDays: 365 })).toBeCloseTo(110, 9);
    expect(contractCeiling({ ...fresh, confirmed: true, verifiedResults: 1e12, ageDays: 365 })).toBeCloseTo(100_010, 6);
  });

  it("is nothing for an account caught forging, whatever it verified before", () => {
    expect(contractCeiling({ confirmed: true, verifiedResults: 5000, ageDays: 400, forged: true })).toBe(0);
  });

  it("counts what the account's contracts still owe: a contract is refused when both together pass the ceiling", () => {
    const confirmed = { ...fresh, confirmed: true };
    expect(contractOverStanding(10, confirmed, 0)).toBeNull();
    expect(contractOverStanding(6, confirmed, 5)).toEqual({ code: "offer-over-standing", contractPrice: 6, ceiling: 10, promised: 5 });
    expect(contractOverStanding(100_000, fresh, 0)?.ceiling).toBe(1);
  });
});
