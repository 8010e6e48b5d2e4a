import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { contractMissed, contractProved, freshProof, probeDelay, PROBE_MAX_TIMEOUTS, PROBE_MEAN_TIMEOUTS, PROBE_MIN_TIMEOUTS, type ContractProof } from "./contract-proof.ts";
import { contractAccrual } from "./settlement.ts";

type Event = { kind: "proved" | "missed"; at: number };

/** Replays events as the service does: every proof and miss, then an accrual after each. What the contract paid in all. */
function replay(events: Event[], price = 100, length = 100) {
  let proof: ContractProof = freshProof(0);
  let paidUntil = 0;
  let paid = 0;
  for (const e of events) {
    if (e.kind === "proved") ({ proof, paidUntil } = contractProved(proof, paidUntil, e.at));
    else proof = contractMissed(proof, paidUntil, e.at);
    const a = contractAccrual({ contractPrice: price, startAt: 0, departsAt: length, paidUntil, provenUntil: proof.provenUntil });
    paid += a.amount;
    paidUntil = a.paidUntil;
  }
  return { paid, paidUntil, proof };
}

describe("contract proof", () => {
  it("pays a machine that keeps proving itself for all the time it proved", () => {
    expect(replay([10, 30, 55, 80, 100].map((at) => ({ kind: "proved", at }))).paid).toBeCloseTo(100);
  });

  it("takes back proof after a missed moment that was not paid yet", () => {
    let proof = freshProof(0);
    ({ proof } = contractProved(proof, 0, 35));
    proof = contractMissed(proof, 10, 30);
    expect(proof).toEqual({ provenUntil: 30, missedAt: 30 });
    // What is still proven is paid at once (10..30); the next proof forfeits the time since the miss.
    const a = contractAccrual({ contractPrice: 100, startAt: 0, departsAt: 100, paidUntil: 10, provenUntil: proof.provenUntil });
    expect(a).toEqual({ amount: 20, paidUntil: 30 });
    expect(contractProved(proof, a.paidUntil, 60)).toEqual({ proof: { provenUntil: 60, missedAt: null }, paidUntil: 60 });
  });

  it("pays nothing to a machine that never proves anything, however long it stays (heartbeats are no proof)", () => {
    const { paid } = replay([{ kind: "missed", at: 5 }, { kind: "missed", at: 40 }, { kind: "missed", at: 90 }]);
    expect(paid).toBe(0);
  });

  it("does not pay the time from a miss to the next proof", () => {
    // Proven to 20, then 35; a probe sent at 30 goes unanswered (found later); proof again at 60, then 100.
    const { paid } = replay([
      { kind: "proved", at: 20 },
      { kind: "proved", at: 35 },
      { kind: "missed", at: 30 },
      { kind: "proved", at: 60 },
      { kind: "proved", at: 100 },
    ]);
    // Paid 0..35 before the miss was known (what was paid stays paid), 35..60 forfeited, 60..100 paid.
    expect(paid).toBeCloseTo(35 + 40);
  });

  it("never takes back what was paid, and never pays more than the contract (property)", () => {
    const event = fc.record({ kind: fc.constantFrom<"proved" | "missed">("proved", "missed"), at: fc.double({ min: -10, max: 200, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        let proof: ContractProof = freshProof(0);
        let paidUntil = 0;
        let total = 0;
        for (const e of events) {
          const before = paidUntil;
          if (e.kind === "proved") ({ proof, paidUntil } = contractProved(proof, paidUntil, e.at));
          else proof = contractMissed(proof, paidUntil, e.at);
          expect(paidUntil).toBeGreaterThanOrEqual(before);
          expect(proof.provenUntil).toBeGreaterThanOrEqual(paidUntil);
          const a = contractAccrual({ contractPrice: 100, startAt: 0, departsAt: 100, paidUntil, provenUntil: proof.provenUntil });
          total += a.amount;
          paidUntil = a.paidUntil;
        }
        expect(total).toBeLessThanOrEqual(100 + 1e-9);
      }),
    );
  });

  it("a machine that only misses earns no more than one that proves (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { maxLength: 20 }), (times) => {
        const sorted = [...times].sort((a, b) => a - b);
        const missing = replay(sorted.map((at) => ({ kind: "missed", at })));
        const proving = replay(sorted.map((at) => ({ kind: "proved", at })));
        expect(missing.paid).toBe(0);
        expect(proving.paid).toBeGreaterThanOrEqual(missing.paid);
      }),
    );
  });
});

describe("probeDelay", () => {
  it("is random around its mean and stays within its documented bounds", () => {
    const timeout = 30;
    const draws = Array.from({ length: 2000 }, (_, i) => probeDelay((i + 0.5) / 2000, timeout));
    for (const d of draws) {
      expect(d).toBeGreaterThanOrEqual(PROBE_MIN_TIMEOUTS * timeout);
      expect(d).toBeLessThanOrEqual(PROBE_MAX_TIMEOUTS * timeout);
    }
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(mean).toBeGreaterThan(0.8 * PROBE_MEAN_TIMEOUTS * timeout);
    expect(mean).toBeLessThan(1.2 * PROBE_MEAN_TIMEOUTS * timeout);
    // Spread out, not a fixed beat a machine could wake up for.
    expect(new Set(draws.map((d) => Math.round(d))).size).toBeGreaterThan(50);
  });

  it("takes any draw, even out of range", () => {
    for (const u of [-1, 0, 0.999999999, 1, 2]) expect(Number.isFinite(probeDelay(u, 10))).toBe(true);
  });
});
