import { describe, expect, it } from "vitest";
import { creditAmount, credits } from "./format";

describe("credits as the pages write them", () => {
  it("have 3 decimals at most, whatever their size", () => {
    expect(credits(0.961926)).toBe("0.962 cr");
    expect(credits(1234.56789)).toBe("1,234.568 cr");
    expect(creditAmount(5.048)).toBe("5.048");
    expect(credits(0)).toBe("0 cr");
  });

  it("have more only where 3 decimals would read 0", () => {
    expect(creditAmount(0.00042)).toBe("0.00042");
    expect(creditAmount(-0.000123)).toBe("-0.00012");
    expect(creditAmount(0.0005)).toBe("0.001");
  });
});
