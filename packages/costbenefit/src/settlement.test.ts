import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  DEFAULT_TERMS,
  benefitWithoutDowntime,
  confirmedFailure,
  contractAccrual,
  escrowFor,
  failurePieces,
  estimateContradicted,
  leaseTerm,
  measuredSpeed,
  measuredWork,
  pieceRate,
  pilotPay,
  settleJob,
  settleUnfinishedJob,
  vouchedSeconds,
  workAtLease,
  type SettleInput,
} from "./settlement.ts";

describe("pieceRate and leaseTerm", () => {
  it("fixes what a lease pays from the ask and the work alone, whatever the machine's speed", () => {
    expect(pieceRate(0.5, 4)).toBe(2);
    expect(pieceRate(-1, 4)).toBe(0);
  });

  it("ends a lease at the factor times its expected run time, at least the floor, the runs queued ahead counted", () => {
    const t = DEFAULT_TERMS;
    expect(leaseTerm(t, { work: 20, speed: 2, slots: 1, ahead: 0, wallSeconds: 120 })).toEqual({ expectedSeconds: 10, lastsSeconds: 30 });
    expect(leaseTerm(t, { work: 0.01, speed: 1, slots: 1, ahead: 0, wallSeconds: 120 }).lastsSeconds).toBe(t.leaseFloorSeconds);
    // Two slots, two leases held already: this one runs second on its slot.
    expect(leaseTerm(t, { work: 10, speed: 1, slots: 2, ahead: 2, wallSeconds: 120 })).toEqual({ expectedSeconds: 20, lastsSeconds: 60 });
  });

  it("never lets a lease outlast the wall-time limit plus the grace, and gives a task of unknown work just that", () => {
    const t = DEFAULT_TERMS;
    expect(leaseTerm(t, { work: 1000, speed: 1, slots: 1, ahead: 0, wallSeconds: 60 }).lastsSeconds).toBe(60 + t.leaseGraceSeconds);
    expect(leaseTerm(t, { work: undefined, speed: 1, slots: 1, ahead: 0, wallSeconds: 60 }).lastsSeconds).toBe(60 + t.leaseGraceSeconds);
  });
});

describe("what the market vouches for", () => {
  it("takes the market's own clock, lowered but never raised by a claim", () => {
    expect(vouchedSeconds(3, 2)).toBe(2);
    expect(vouchedSeconds(3, 2e9)).toBe(3);
    for (const claim of [-5, Number.NaN, Number.POSITIVE_INFINITY]) expect(vouchedSeconds(3, claim)).toBe(3);
  });

  it("measures a job's work over enough owners, one vote each, so one owner reporting late cannot move it", () => {
    const s = (owner: string, work: number) => ({ owner, work });
    expect(measuredWork([s("a", 1), s("b", 1), s("c", 1000)], 3)).toBe(1);
    // One owner's hundred slow reports are one vote, at its fastest.
    expect(measuredWork([...Array.from({ length: 100 }, () => s("late", 50)), s("late", 2), s("b", 1), s("c", 1)], 3)).toBe(1);
    expect(measuredWork([s("a", 1), s("a", 2)], 3)).toBeUndefined();
    expect(workAtLease(DEFAULT_TERMS, 0.5, [s("a", 1), s("b", 1)])).toBe(0.5);
    expect(workAtLease(DEFAULT_TERMS, 0.5, [s("a", 1), s("b", 1), s("c", 2)])).toBe(1);
  });

  it("pays a pilot at most its stated cap, however long the run or the claim", () => {
    const most = pieceRate(0.1, DEFAULT_TERMS.pilotWorkCapSeconds);
    expect(pilotPay(DEFAULT_TERMS, { askPerWorkSecond: 0.1, speed: 1, observedSeconds: 2e6, reportedSeconds: 2e6 })).toBe(most);
    expect(pilotPay(DEFAULT_TERMS, { askPerWorkSecond: 0.1, speed: 1, observedSeconds: 2, reportedSeconds: 1 })).toBeCloseTo(0.1);
  });

  it("lowers a slow machine's speed from what the market measured, and never raises it past its benchmark", () => {
    const slow = measuredSpeed(DEFAULT_TERMS, { benchmark: 2, current: 2 }, { work: 1, observedSeconds: 10 });
    expect(slow).toBeLessThan(2);
    expect(measuredSpeed(DEFAULT_TERMS, { benchmark: 2, current: 2 }, { work: 100, observedSeconds: 0.01 })).toBe(2);
  });

  it("confirms a failure only when a machine of another owner reproduced the same failure", () => {
    expect(confirmedFailure([{ owner: "a", code: "trap" }])).toBeNull();
    expect(confirmedFailure([{ owner: "a", code: "trap" }, { owner: "a", code: "trap" }])).toBeNull();
    expect(confirmedFailure([{ owner: "a", code: "trap" }, { owner: "b", code: "exit:1" }])).toBeNull();
    expect(confirmedFailure([{ owner: "a", code: "trap" }, { owner: "b", code: "trap" }])).toBe("trap");
    // A worker that could not fetch the module says nothing of the program, however many say so.
    expect(confirmedFailure([{ owner: "a", code: "invalid-module" }, { owner: "b", code: "invalid-module" }])).toBeNull();
  });

  it("confirms a failure only independently, and only with an account with standing among the two", () => {
    const fresh = (owner: string, network: string | null = null) => ({ owner, code: "trap", standing: false, network });
    const standing = (owner: string, network: string | null = null, verifier?: string) => ({ owner, code: "trap", standing: true, network, verifier });
    // Two fresh accounts (one person's, accounts cost nothing) confirm nothing, however many.
    expect(confirmedFailure([fresh("a"), fresh("b"), fresh("c")])).toBeNull();
    expect(confirmedFailure([fresh("a"), standing("b")])).toBe("trap");
    // One organisation's accounts are one verifier, one network's runs one person's.
    expect(confirmedFailure([standing("a", null, "domain:firm.test"), standing("b", null, "domain:firm.test")])).toBeNull();
    expect(confirmedFailure([standing("a", "203.0.113.0/24"), fresh("b", "203.0.113.0/24")])).toBeNull();
    expect(confirmedFailure([standing("a", "203.0.113.0/24"), fresh("b", "198.51.100.0/24")])).toBe("trap");
    // A fresh account's run then one with standing, after others: found whatever the order.
    expect(confirmedFailure([fresh("a"), fresh("b"), standing("c")])).toBe("trap");
  });

  it("calls an estimate contradicted only past the tolerance", () => {
    expect(estimateContradicted(DEFAULT_TERMS, 0.01, 40)).toBe(true);
    expect(estimateContradicted(DEFAULT_TERMS, 1, 1.1)).toBe(false);
    expect(estimateContradicted(DEFAULT_TERMS, 1, 1.11)).toBe(true);
  });
});

describe("escrowFor", () => {
  it("holds the quote, or the consumer's maxSpend when it is more; the highest benefit only under pay-as-bid", () => {
    expect(escrowFor({ pricing: "posted", price: 3, maxBenefit: 100 })).toBe(3);
    expect(escrowFor({ pricing: "posted", price: 3, maxSpend: 5, maxBenefit: 100 })).toBe(5);
    expect(escrowFor({ pricing: "bid", price: 3, maxBenefit: 100 })).toBe(100);
  });
});

describe("settleJob", () => {
  const base: SettleInput = { pricing: "posted", price: 10, maxSpend: 10, benefit: 50, benefitWithoutDowntime: 50, contradicted: null, held: [] };

  it("charges exactly the quote while the estimate holds, however the producers did", () => {
    const s = settleJob(base);
    expect(s.charge).toBe(10);
    expect(s.reasons[0]).toEqual({ code: "charged-price", price: 10, benefit: 50 });
  });

  it("relieves lateness only from the late producers' held pieces, never from those tied to the consumer", () => {
    const s = settleJob({
      ...base,
      benefit: -100,
      benefitWithoutDowntime: -100,
      held: [
        { producerId: "self", amount: 50, related: true },
        { producerId: "late", amount: 4, related: false },
      ],
    });
    expect(s.reliefFromLate).toEqual([{ producerId: "late", amount: 4 }]);
    expect(s.heldPaid).toEqual([{ producerId: "self", amount: 50 }]);
    expect(s.charge).toBe(6);
    expect(s.reasons.map((r) => r.code)).toEqual(["charged-price", "lateness-relief", "lateness-unfunded"]);
  });

  it("lets the market pay only for the lateness its own downtime caused", () => {
    const s = settleJob({ ...base, benefit: 0, benefitWithoutDowntime: 7 });
    expect(s.reliefFromMarket).toBe(7);
    expect(s.charge).toBe(3);
  });

  it("lets the market waive the charge for its downtime, never pay out the penalty a curve states", () => {
    const s = settleJob({ ...base, benefit: -1e9, benefitWithoutDowntime: 50 });
    expect(s.reliefFromMarket).toBe(10);
    expect(s.charge).toBe(0);
    expect(s.reasons.map((r) => r.code)).toEqual(["charged-price", "lateness-relief", "lateness-unfunded"]);
    // Late producers' held pieces still relieve first, and the market only what they leave of the charge.
    const late = settleJob({ ...base, benefit: -1e9, benefitWithoutDowntime: 50, held: [{ producerId: "late", amount: 4, related: false }] });
    expect(late.reliefFromLate).toEqual([{ producerId: "late", amount: 4 }]);
    expect(late.reliefFromMarket).toBe(6);
    expect(late.charge).toBe(0);
  });

  it("charges a contradicted estimate what its measured work costs, up to maxSpend, and relieves no lateness", () => {
    const s = settleJob({ ...base, maxSpend: 25, benefit: -5, benefitWithoutDowntime: 0, contradicted: { charge: 40 } });
    expect(s.charge).toBe(25);
    expect(s.reliefFromMarket).toBe(0);
    expect(s.reasons.map((r) => r.code)).toEqual(["charged-measured-work", "lateness-consumers-own"]);
  });

  it("never charges past maxSpend, never relieves more than is owed, never has the market pay out a penalty, and pays out every held piece (property)", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.option(fc.double({ min: 0, max: 1e7, noNaN: true })),
        fc.array(fc.record({ producerId: fc.constantFrom("a", "b", "c"), amount: fc.double({ min: 0, max: 1e4, noNaN: true }), related: fc.boolean() }), { maxLength: 8 }),
        (price, extra, benefit, downtime, contradicted, held) => {
          const maxSpend = price + extra;
          const s = settleJob({ pricing: "posted", price, maxSpend, benefit, benefitWithoutDowntime: benefit + downtime, contradicted: contradicted === null ? null : { charge: contradicted }, held });
          const fromLate = s.reliefFromLate.reduce((t, r) => t + r.amount, 0);
          const paidOut = s.heldPaid.reduce((t, r) => t + r.amount, 0);
          const heldTotal = held.reduce((t, h) => t + h.amount, 0);
          expect(s.charge).toBeLessThanOrEqual(maxSpend + 1e-6);
          expect(fromLate + paidOut).toBeCloseTo(heldTotal, 6);
          expect(s.reliefFromMarket).toBeLessThanOrEqual(downtime + 1e-9);
          const base = contradicted === null ? price : Math.min(maxSpend, Math.max(price, contradicted));
          // The market's relief only waives what is left of the charge: it never pays a penalty out.
          expect(s.reliefFromMarket).toBeLessThanOrEqual(Math.max(0, base - fromLate) + 1e-6);
          expect(fromLate + s.reliefFromMarket).toBeLessThanOrEqual(Math.max(0, base - benefit) + 1e-6);
          for (const r of s.reliefFromLate) expect(held.some((h) => h.producerId === r.producerId && !h.related)).toBe(true);
        },
      ),
    );
  });
});

describe("settleUnfinishedJob", () => {
  const job = { provisional: false, price: 12, tasks: 12, done: 11, failed: 0, paid: 1.1, escrow: 12 };
  it("charges a job stopped before its last task the quote's share of the tasks done, whoever stopped it", () => {
    for (const why of ["cancelled", "failed", "escrow-exhausted"] as const) {
      const s = settleUnfinishedJob({ ...job, why });
      expect(s.charge).toBeCloseTo(11, 12);
      expect(s.reasons).toEqual([{ code: "charged-share", price: 12, tasks: 12, done: 11, failed: 0, share: 11, paid: 1.1 }]);
    }
  });
  it("counts a task whose run failed, unconfirmed, as done: how it ended is an answer too", () => {
    // One task, its answer in a failed run's exit code, cancelled before another owner ran it.
    expect(settleUnfinishedJob({ ...job, why: "cancelled", tasks: 1, done: 0, failed: 1, paid: 0, price: 2.76, escrow: 2.76 }).charge).toBeCloseTo(2.76, 12);
    expect(settleUnfinishedJob({ ...job, why: "cancelled", done: 10, failed: 1 }).charge).toBeCloseTo(11, 12);
  });
  it("charges what the producers were paid when that is more, and never more than the escrow or less than paid", () => {
    expect(settleUnfinishedJob({ ...job, why: "cancelled", paid: 11.5 }).charge).toBe(11.5);
    expect(settleUnfinishedJob({ ...job, why: "cancelled", escrow: 5 }).charge).toBe(5);
    expect(settleUnfinishedJob({ ...job, why: "cancelled", paid: 13, escrow: 12 }).charge).toBe(13);
  });
  it("charges only what was paid where no price was agreed: pilots still running, a rest the market did not admit", () => {
    expect(settleUnfinishedJob({ ...job, why: "cancelled", provisional: true }).charge).toBe(1.1);
    expect(settleUnfinishedJob({ ...job, why: "remainder-rejected" }).charge).toBe(1.1);
  });
  it("is between what was paid and the escrow for any job", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 }), fc.double({ min: 0, max: 1e6, noNaN: true }), (price, tasks, done, failed, paid) => {
        const escrow = price + paid;
        const { charge } = settleUnfinishedJob({ why: "cancelled", provisional: false, price, tasks, done: Math.min(done, tasks), failed, paid, escrow });
        expect(charge).toBeGreaterThanOrEqual(paid);
        expect(charge).toBeLessThanOrEqual(escrow);
      }),
    );
  });
});

describe("benefitWithoutDowntime", () => {
  const deadline = { kind: "deadline" as const, value: 20, deadline: 9, penalty: -5000 };

  it("gives back what an outage took from a job that would have kept its plan", () => {
    // Planned at 6 s, the market down 4 s: the job completed at 10 s, past the deadline, because of it.
    expect(benefitWithoutDowntime(deadline, { took: 10, down: 4, planned: 6 })).toBe(20);
  });

  it("gives back nothing when the plan and the outage together still met the deadline", () => {
    // Planned at 1 s, down 4 s: the job would have completed by 5 s. Its completion at 9.5 s was
    // someone else's doing (a producer holding its result), however the outage's seconds fall.
    expect(benefitWithoutDowntime(deadline, { took: 9.5, down: 4, planned: 1 })).toBe(-5000);
  });

  it("gives back nothing when the job was late for another reason, whatever its plan", () => {
    expect(benefitWithoutDowntime(deadline, { took: 30, down: 4, planned: 6 })).toBe(-5000);
  });

  it("is the benefit at completion without an outage, and never more than the benefit the outage's length before it", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 50, noNaN: true }), fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }), (took, down, planned) => {
        const b = benefitWithoutDowntime(deadline, { took, down, planned });
        const at = took <= deadline.deadline ? deadline.value : deadline.penalty;
        expect(b).toBeGreaterThanOrEqual(at);
        expect(b).toBeLessThanOrEqual(Math.max(0, took - down) <= deadline.deadline ? deadline.value : deadline.penalty);
        if (down === 0) expect(b).toBe(at);
      }),
    );
  });
});

describe("contractAccrual", () => {
  const c = { contractPrice: 100, startAt: 0, departsAt: 100, paidUntil: 0 };

  it("pays the share of the contract for the time the machine proved it was there", () => {
    expect(contractAccrual({ ...c, provenUntil: 25 })).toEqual({ amount: 25, paidUntil: 25 });
    expect(contractAccrual({ ...c, paidUntil: 25, provenUntil: 50 })).toEqual({ amount: 25, paidUntil: 50 });
  });

  it("pays nothing for time already paid, time not yet proved or time past the contract", () => {
    expect(contractAccrual({ ...c, paidUntil: 50, provenUntil: 40 }).amount).toBe(0);
    expect(contractAccrual({ ...c, paidUntil: 90, provenUntil: 500 }).amount).toBe(10);
  });

  it("never pays more than the contract in total, however often it is asked (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -10, max: 200, noNaN: true }), { maxLength: 30 }), (proofs) => {
        let paidUntil = 0;
        let total = 0;
        for (const provenUntil of proofs) {
          const a = contractAccrual({ ...c, paidUntil, provenUntil });
          total += a.amount;
          paidUntil = a.paidUntil;
        }
        expect(total).toBeLessThanOrEqual(100 + 1e-9);
      }),
    );
  });
});

describe("failurePieces", () => {
  it("pays a confirmed failure's runs their pieces within the task's share, in the order they failed", () => {
    expect(failurePieces([100n, 100n], 110n)).toEqual([100n, 10n]);
    expect(failurePieces([30n, 40n], 110n)).toEqual([30n, 40n]);
    expect(failurePieces([50n, 60n, 70n], 100n)).toEqual([50n, 50n, 0n]);
  });
  it("never pays a run less than the largest piece allows when that is over the share", () => {
    expect(failurePieces([120n, 80n], 100n)).toEqual([120n, 0n]);
    expect(failurePieces([], 100n)).toEqual([]);
  });
});
