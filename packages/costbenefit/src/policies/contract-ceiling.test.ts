import { describe, expect, it } from "vitest";
import { contractCeiling, contractOverStanding, CONTRACT_CEILING_CONFIRMED, CONTRACT_CEILING_NEW, CONTRACT_CEILING_PER_RESULT } from "./purchase.ts";

describe("what the market may promise one account in contracts", () => {
  it("is small for a new account, more once it confirmed its address, and grows with accepted results", () => {
    expect(contractCeiling({ confirmed: false, acceptedResults: 0 })).toBe(CONTRACT_CEILING_NEW);
    expect(contractCeiling({ confirmed: true, acceptedResults: 0 })).toBe(CONTRACT_CEILING_CONFIRMED);
    expect(contractCeiling({ confirmed: true, acceptedResults: 1000 })).toBeCloseTo(CONTRACT_CEILING_CONFIRMED + 1000 * CONTRACT_CEILING_PER_RESULT, 9);
    expect(contractCeiling({ confirmed: true, acceptedResults: 1e12 })).toBe(1_000_000);
  });

  it("counts what the account's contracts still owe: a contract is refused when both together pass the ceiling", () => {
    const confirmed = { confirmed: true, acceptedResults: 0 };
    expect(contractOverStanding(10, confirmed, 0)).toBeNull();
    expect(contractOverStanding(6, confirmed, 5)).toEqual({ code: "offer-over-standing", contractPrice: 6, ceiling: 10, promised: 5 });
    expect(contractOverStanding(100_000, { confirmed: false, acceptedResults: 0 }, 0)?.ceiling).toBe(1);
  });
});
