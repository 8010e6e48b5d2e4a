import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DEFAULT_TERMS, contractAccrual, estimateContradicted, penaltyHold, refinedWork, runPay, settleCharge } from "./settlement.ts";

const run = { workPerTask: 1, speed: 1, pricePerSecond: 2, wallSeconds: 120, escrowLeft: 1e9 };

describe("runPay", () => {
  it("pays an honest report in full", () => {
    const p = runPay(DEFAULT_TERMS, { ...run, reportedSeconds: 1.5 });
    expect(p.paidSeconds).toBe(1.5);
    expect(p.amount).toBe(3);
    expect(p.implausible).toBe(false);
  });

  it("pays a run claimed at 24.9 days for a 0.01 s task only up to the cap, and flags it", () => {
    const p = runPay(DEFAULT_TERMS, { ...run, workPerTask: 0.01, pricePerSecond: 1_000_000, reportedSeconds: 2_147_483 });
    expect(p.capSeconds).toBe(DEFAULT_TERMS.payFloorSeconds);
    expect(p.amount).toBe(DEFAULT_TERMS.payFloorSeconds * 1_000_000);
    expect(p.implausible).toBe(true);
  });

  it("never pays past the wall-time limit or past the escrow", () => {
    const slow = runPay(DEFAULT_TERMS, { ...run, workPerTask: 100, reportedSeconds: 300 });
    expect(slow.paidSeconds).toBe(120);
    const poor = runPay(DEFAULT_TERMS, { ...run, reportedSeconds: 1, escrowLeft: 0.5 });
    expect(poor.amount).toBe(0.5);
    expect(poor.escrowExhausted).toBe(true);
  });

  it("treats a negative, NaN or infinite report as no time at all", () => {
    for (const reportedSeconds of [-5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(runPay(DEFAULT_TERMS, { ...run, reportedSeconds }).amount).toBe(0);
    }
  });

  it("pays any claim at most the cap times the price, and never more than the escrow (property)", () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: false }),
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        fc.double({ min: 0.01, max: 50, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        (reportedSeconds, workPerTask, speed, pricePerSecond, escrowLeft) => {
          const p = runPay(DEFAULT_TERMS, { reportedSeconds, workPerTask, speed, pricePerSecond, wallSeconds: 120, escrowLeft });
          expect(p.amount).toBeGreaterThanOrEqual(0);
          expect(p.amount).toBeLessThanOrEqual(escrowLeft);
          expect(p.paidSeconds).toBeLessThanOrEqual(Math.min(120, Math.max(DEFAULT_TERMS.payFloorSeconds, DEFAULT_TERMS.payCapMultiple * (workPerTask / speed))) + 1e-9);
        },
      ),
    );
  });
});

describe("refinedWork", () => {
  it("moves the estimate a bounded step towards what the run could honestly have measured", () => {
    const inflated = refinedWork(DEFAULT_TERMS, { workPerTask: 1, speed: 1, wallSeconds: 120, reportedSeconds: 1e9 });
    expect(inflated).toBeCloseTo(0.7 + 0.3 * 4);
    expect(refinedWork(DEFAULT_TERMS, { workPerTask: 1, speed: 1, wallSeconds: 120, reportedSeconds: 1 })).toBeCloseTo(1);
  });
});

describe("settleCharge", () => {
  const base = { pricing: "bid" as const, price: 10, paidToProducers: 1, consumerEscrow: 20, penaltyHeld: 0, consumerCausedLateness: false };

  it("charges the posted price, or less when the job finished late and its benefit fell below it", () => {
    expect(settleCharge({ ...base, pricing: "posted", benefit: 15 })).toMatchObject({ charge: 10, marketIncome: 9 });
    expect(settleCharge({ ...base, pricing: "posted", benefit: 6 }).charge).toBe(6);
  });

  it("charges b(j, t) under bid pricing when it covers the producers' time", () => {
    const c = settleCharge({ ...base, benefit: 15 });
    expect(c).toMatchObject({ charge: 15, compensation: 0, marketIncome: 14 });
  });

  it("charges at least the producer time the job used, so the market never pays for it", () => {
    const c = settleCharge({ ...base, benefit: 0, paidToProducers: 4 });
    expect(c.charge).toBe(4);
    expect(c.marketIncome).toBe(0);
    expect(c.reasons[0]!.code).toBe("charged-producer-time");
  });

  it("pays a penalty only up to the job's price and what the market set aside", () => {
    const c = settleCharge({ ...base, benefit: -1e12, penaltyHeld: penaltyHold(-1e12, 10) });
    expect(c.compensation).toBe(10);
  });

  it("voids the penalty when the consumer's own estimate made the job late", () => {
    const c = settleCharge({ ...base, benefit: -1e12, penaltyHeld: 10, consumerCausedLateness: true });
    expect(c.compensation).toBe(0);
    expect(c.reasons.map((r) => r.code)).toContain("penalty-void");
  });

  it("never takes more than the escrow, never gives the market a loss, never pays more than the hold (property)", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e12, max: 1e12, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.boolean(),
        fc.constantFrom("posted" as const, "bid" as const),
        (benefit, price, escrow, paidShare, caused, pricing) => {
          const paid = Math.min(escrow, paidShare);
          const held = penaltyHold(Math.min(0, benefit), price);
          const c = settleCharge({ pricing, benefit, price, paidToProducers: paid, consumerEscrow: escrow, penaltyHeld: held, consumerCausedLateness: caused });
          expect(c.charge).toBeLessThanOrEqual(escrow);
          expect(c.charge).toBeGreaterThanOrEqual(paid);
          expect(c.marketIncome).toBeGreaterThanOrEqual(0);
          expect(c.compensation).toBeLessThanOrEqual(held);
          expect(c.compensation).toBeLessThanOrEqual(price);
        },
      ),
    );
  });
});

describe("estimateContradicted", () => {
  it("holds when the measured work is well over the declared work", () => {
    expect(estimateContradicted(DEFAULT_TERMS, 0.01, 40)).toBe(true);
    expect(estimateContradicted(DEFAULT_TERMS, 1, 1.5)).toBe(false);
  });
});

describe("contractAccrual", () => {
  const c = { contractPrice: 100, startAt: 0, departsAt: 100, paidUntil: 0 };

  it("pays the share of the contract for the time the machine was heard", () => {
    expect(contractAccrual({ ...c, presentUntil: 25 })).toEqual({ amount: 25, paidUntil: 25 });
    expect(contractAccrual({ ...c, paidUntil: 25, presentUntil: 50 })).toEqual({ amount: 25, paidUntil: 50 });
  });

  it("pays nothing for time already paid, time not yet heard or time past the contract", () => {
    expect(contractAccrual({ ...c, paidUntil: 50, presentUntil: 40 }).amount).toBe(0);
    expect(contractAccrual({ ...c, paidUntil: 90, presentUntil: 500 }).amount).toBe(10);
  });

  it("never pays more than the contract in total, however often it is asked (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -10, max: 200, noNaN: true }), { maxLength: 30 }), (beats) => {
        let paidUntil = 0;
        let total = 0;
        for (const presentUntil of beats) {
          const a = contractAccrual({ ...c, paidUntil, presentUntil });
          total += a.amount;
          paidUntil = a.paidUntil;
        }
        expect(total).toBeLessThanOrEqual(100 + 1e-9);
      }),
    );
  });
});
