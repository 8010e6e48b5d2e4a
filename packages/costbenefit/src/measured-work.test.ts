import { describe, expect, it } from "vitest";
import { contradictedWork, leaseBudget, measuredWorkCharge, speedAfterRun, workSampleOf, SPEED_CHANGE_NOISE } from "./measured-work.ts";
import { DEFAULT_TERMS, SettlementTerms } from "./settlement.ts";

const run = { observedSeconds: 10, reportedSeconds: 8, owner: "bob", speed: 2, network: "10.0.1.0/24" };
const job = { owner: "ann", submitNetwork: "10.0.0.0/24", samplesTaken: 0 };

describe("which runs measure a job's work", () => {
  it("takes a sample from a machine of another owner on another network", () => {
    expect(workSampleOf(DEFAULT_TERMS, run, job)).toEqual({ owner: "bob", work: 16 });
  });

  it("takes none from the consumer's own machines or network: they could make the estimate look right", () => {
    expect(workSampleOf(DEFAULT_TERMS, { ...run, owner: "ann" }, job)).toBeNull();
    expect(workSampleOf(DEFAULT_TERMS, { ...run, network: job.submitNetwork }, job)).toBeNull();
    // A job whose network is not known is measured by any other owner.
    expect(workSampleOf(DEFAULT_TERMS, { ...run, network: null }, { ...job, submitNetwork: null })).not.toBeNull();
  });

  it("stops sampling after workSamplesKept samples", () => {
    const t = SettlementTerms.parse({ workSamplesKept: 4 });
    expect(workSampleOf(t, run, { ...job, samplesTaken: 3 })).not.toBeNull();
    expect(workSampleOf(t, run, { ...job, samplesTaken: 4 })).toBeNull();
  });
});

describe("which runs measure a machine's speed", () => {
  const r = { knownWork: 10, pilot: false, ahead: 0, slots: 2, observedSeconds: 10, speed: 2, benchmark: 2 };

  it("lowers the speed after a slower run of known work that started at once", () => {
    const next = speedAfterRun(DEFAULT_TERMS, r);
    expect(next).not.toBeNull();
    expect(next!).toBeLessThan(2);
  });

  it("measures nothing from a pilot, a queued run, unknown work, a short run or a change within the noise", () => {
    expect(speedAfterRun(DEFAULT_TERMS, { ...r, pilot: true })).toBeNull();
    expect(speedAfterRun(DEFAULT_TERMS, { ...r, ahead: 2 })).toBeNull();
    expect(speedAfterRun(DEFAULT_TERMS, { ...r, knownWork: undefined })).toBeNull();
    expect(speedAfterRun(SettlementTerms.parse({ speedSampleMinSeconds: 10 }), r)).toBeNull();
    expect(speedAfterRun(DEFAULT_TERMS, { ...r, observedSeconds: 5 * (1 + SPEED_CHANGE_NOISE / 2) })).toBeNull();
  });
});

describe("a contradicted estimate", () => {
  const samples = [
    { owner: "a", work: 30 },
    { owner: "b", work: 30 },
    { owner: "c", work: 30 },
  ];

  it("is the measured work once enough owners measured more than the tolerance, under posted pricing only", () => {
    expect(contradictedWork(DEFAULT_TERMS, { pricing: "posted", declaredWork: 10, samples })).toBe(30);
    expect(contradictedWork(DEFAULT_TERMS, { pricing: "posted", declaredWork: 28, samples })).toBeUndefined();
    expect(contradictedWork(DEFAULT_TERMS, { pricing: "posted", declaredWork: 10, samples: samples.slice(0, 2) })).toBeUndefined();
    expect(contradictedWork(DEFAULT_TERMS, { pricing: "bid", declaredWork: 10, samples })).toBeUndefined();
  });

  it("is charged its plan at the measured work, in proportion without the plan's points", () => {
    const priceAtWork = [
      { ratio: 1, price: 10, completionAt: 0 },
      { ratio: 2, price: 25, completionAt: 0 },
      { ratio: 3, price: 45, completionAt: 0 },
    ];
    expect(measuredWorkCharge({ price: 10, declaredWork: 10, priceAtWork }, 30)).toBe(45);
    expect(measuredWorkCharge({ price: 10, declaredWork: 10, priceAtWork: null }, 30)).toBe(30);
    expect(measuredWorkCharge({ price: 10, declaredWork: 10, priceAtWork: null }, 5)).toBe(10);
  });
});

describe("leaseBudget", () => {
  it("is the quote while the estimate holds, whatever maxSpend put in escrow beside it", () => {
    expect(leaseBudget({ pricing: "posted", price: 0.03, escrow: 500, contradictedCharge: null })).toBe(0.03);
    expect(leaseBudget({ pricing: "posted", price: 2, escrow: 2, contradictedCharge: null })).toBe(2);
  });
  it("is what the measured work is charged once the estimate is contradicted, up to the escrow", () => {
    expect(leaseBudget({ pricing: "posted", price: 0.03, escrow: 500, contradictedCharge: 7 })).toBe(7);
    expect(leaseBudget({ pricing: "posted", price: 0.03, escrow: 500, contradictedCharge: 900 })).toBe(500);
  });
  it("is the escrow under pay-as-bid", () => {
    expect(leaseBudget({ pricing: "bid", price: 0.03, escrow: 100, contradictedCharge: null })).toBe(100);
  });
});
