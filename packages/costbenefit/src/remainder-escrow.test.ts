import { describe, expect, it } from "vitest";
import { remainderEscrow, remainderMaxSpend } from "./remainder-escrow.ts";

describe("the escrow of a pilot job's rest", () => {
  it("takes from the consumer only what the pilots' spare escrow does not cover", () => {
    // The pilots were priced at 2 and their escrow holds 5: 3 of it backs the rest.
    expect(remainderEscrow({ pricing: "posted", price: 10, maxBenefit: 50, maxSpend: undefined, pilotPrice: 2, pilotEscrow: 5 })).toEqual({ escrow: 10, needed: 7 });
    expect(remainderEscrow({ pricing: "posted", price: 1, maxBenefit: 50, maxSpend: undefined, pilotPrice: 2, pilotEscrow: 5 })).toEqual({ escrow: 1, needed: 0 });
    // An escrow that held only the pilots' price backs nothing.
    expect(remainderEscrow({ pricing: "posted", price: 10, maxBenefit: 50, maxSpend: undefined, pilotPrice: 2, pilotEscrow: 2 }).needed).toBe(10);
  });

  it("counts the pilots' price as spent of the job's maxSpend", () => {
    expect(remainderMaxSpend(30, 2)).toBe(28);
    expect(remainderMaxSpend(1, 2)).toBe(0);
    expect(remainderMaxSpend(undefined, 2)).toBeUndefined();
    // The rest's escrow holds up to that maxSpend under posted pricing.
    expect(remainderEscrow({ pricing: "posted", price: 10, maxBenefit: 50, maxSpend: 30, pilotPrice: 2, pilotEscrow: 2 })).toEqual({ escrow: 28, needed: 28 });
  });

  it("holds the curve's highest benefit under pay-as-bid", () => {
    expect(remainderEscrow({ pricing: "bid", price: 10, maxBenefit: 40, maxSpend: undefined, pilotPrice: 2, pilotEscrow: 2 })).toEqual({ escrow: 40, needed: 40 });
  });
});
