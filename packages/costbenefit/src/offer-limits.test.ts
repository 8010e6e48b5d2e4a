import { describe, expect, it } from "vitest";
import { OFFER_LIMITS, offerFault } from "./offer-limits.ts";

const offer = { kind: "opportunistic" as const, speed: 1, pricePerSecond: 0.001 };

describe("the machine offers the market believes", () => {
  it("takes a speed within the range, ends included", () => {
    expect(offerFault(offer)).toBeNull();
    expect(offerFault({ ...offer, speed: OFFER_LIMITS.minSpeed })).toBeNull();
    expect(offerFault({ ...offer, speed: OFFER_LIMITS.maxSpeed })).toBeNull();
  });

  it("refuses an unbelievable speed, naming the range", () => {
    for (const speed of [OFFER_LIMITS.maxSpeed * 1.01, OFFER_LIMITS.minSpeed / 2, 0, NaN]) {
      expect(offerFault({ ...offer, speed })).toEqual({ code: "implausible-speed", speed, min: OFFER_LIMITS.minSpeed, max: OFFER_LIMITS.maxSpeed });
    }
  });

  it("refuses a negative price and a dedicated offer without its terms", () => {
    expect(offerFault({ ...offer, pricePerSecond: -1 })).toEqual({ code: "negative-price", price: -1 });
    expect(offerFault({ ...offer, kind: "dedicated", departsAt: 1 })).toEqual({ code: "incomplete-offer" });
    expect(offerFault({ ...offer, kind: "dedicated", departsAt: 1, contractPrice: 5 })).toBeNull();
  });
});

describe("a machine offered to several managers at once", () => {
  it("is taken when opportunistic, refused when dedicated (its contract's hours would be paid by each)", () => {
    const key = "b9c5b2e4-9f0e-4a63-9d4f-3c1e6f0a2b11";
    expect(offerFault({ ...offer, offerKey: key })).toBeNull();
    expect(offerFault({ ...offer, kind: "dedicated", departsAt: 1, contractPrice: 5, offerKey: key })).toEqual({ code: "dedicated-offered-to-several" });
  });
});
