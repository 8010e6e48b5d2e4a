import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";

// Consumers pay the market's posted price (the plan's marginal cost plus the fee), not their
// whole bid; the paper's pay-as-bid stays an admin setting; quotes say what a price is made of,
// and what benefit a job that is not admitted would need.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let admin: Client;
let consumer: Client;
let producer: Client;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;

beforeAll(async () => {
  market = await startTestMarket();
  const { email, password } = market.manager.admin!;
  admin = await market.signIn(email, password);
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  producer = await market.signUp("seller@example.test", ["producer"]);
  worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
  ({ machineId } = await worker.worker.register.mutate({
    name: "rack", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test",
  }));
});
afterAll(() => market?.stop());

const pi = (value: number, taskCount = 2) => ({
  name: "pi",
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 100_000 }, taskCount },
  benefit: { kind: "constant" as const, value },
});

async function runAll(elapsedMs = 5) {
  for (;;) {
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 4 });
    if (!leases.length) return;
    for (const lease of leases) {
      const stdout = Buffer.from("3 4\n");
      await worker.worker.report.mutate({
        machineId, leaseId: lease.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs,
      });
    }
  }
}

describe("posted prices", () => {
  it("quote a price made of producers' pay, congestion and the fee, and charge it instead of the bid", async () => {
    const quote = await consumer.jobs.quote.mutate(pi(200));
    expect(quote.outcome).toBe("admitted");
    if (quote.outcome !== "admitted") return;
    expect(quote.price).toBeLessThan(20); // far below the bid of 200
    const parts = quote.priceParts!;
    expect(parts.producerPayments).toBeGreaterThan(0);
    expect(parts.fee).toBeCloseTo(0.1 * (parts.producerPayments + parts.congestion), 6);
    expect(parts.producerPayments + parts.congestion + parts.fee).toBeCloseTo(quote.price, 6);
    expect(quote.terms).toMatchObject({ pricing: "posted", feeFraction: 0.1 });

    const before = (await consumer.ledger.statement.query()).consumerBalance;
    const { jobId, decision } = await consumer.jobs.submit.mutate(pi(200));
    expect(decision.outcome).toBe("admitted");
    const price = decision.outcome === "admitted" ? decision.price : NaN;
    const running = await consumer.jobs.get.query({ jobId });
    expect(running.escrowHeld).toBeLessThan(200);
    expect(running.estimate).toMatchObject({ basis: "plan" });
    expect(running.estimate!.chargeIfNow).toBeCloseTo(price, 6);
    await runAll();
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.charged).toBeCloseTo(price, 6);
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(before - price, 6);
    // The producer was paid its piece rates out of the escrow (0.5 credits a reference second of the
    // work planned per task, whatever it reported); the market kept the rest of the price.
    const db = market.manager.services.db;
    const paid = Number((await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind: "producer" } } }))._sum.amountMicro!) / 1e6;
    expect(paid).toBeCloseTo(2 * 0.5 * job.workPerTask, 6);
    const settlement = (await consumer.ledger.statement.query()).lines.find((l) => l.kind === "settlement" && l.jobId === jobId);
    expect(JSON.stringify(settlement?.memo)).toContain("charged-price");
    // The producer sees what it earned this hour, and what consumers paid for the work it did.
    const earnings = await producer.ledger.earnings.query();
    expect(earnings.earnedLastHour).toBeCloseTo(paid, 6);
    expect(earnings.hourly.at(-1)?.earned).toBeCloseTo(paid, 6);
    expect(earnings.paidForThatWork).toBeCloseTo(paid, 6);
    expect(earnings.chargedForTheirWork).toBeCloseTo(price, 6);
    await expectLedgerBalances(market.manager.services.db);
  });

  it("under the paper's pay-as-bid setting charge the benefit, and each job keeps the rule it was admitted under", async () => {
    await admin.admin.settings.set.mutate({ pricing: "bid" });
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate(pi(30, 1));
      expect(decision.outcome === "admitted" && decision.price).toBe(30);
      // Switching back before it settles does not change what it pays.
      await admin.admin.settings.set.mutate({ pricing: "posted" });
      await runAll();
      const job = await consumer.jobs.get.query({ jobId });
      expect(job).toMatchObject({ status: "completed", pricing: "bid", charged: 30 });
    } finally {
      await admin.admin.settings.set.mutate({ pricing: "posted" }).catch(() => {});
    }
    await expectLedgerBalances(market.manager.services.db);
  });

  it("tell a job that is not admitted the benefit that would be, and when it will be given up", async () => {
    const { jobId, decision } = await consumer.jobs.submit.mutate(pi(0.000001, 1));
    expect(decision.outcome).toBe("delayed");
    const why = decision.reasons.find((r) => r.code === "unprofitable") as { benefitNeeded?: number; marginalCost: number } | undefined;
    expect(why?.benefitNeeded).toBeCloseTo(why!.marginalCost * 1.1, 9);
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.givesUpAt! - job.submittedAt).toBe(10 * 60_000);
    await consumer.jobs.cancel.mutate({ jobId });
    // With the benefit the market named, the same job is admitted.
    const again = await consumer.jobs.quote.mutate(pi(why!.benefitNeeded! * 1.01, 1));
    expect(again.outcome).toBe("admitted");
  });

  it("estimate completion from the pace tasks finish at once some are done", async () => {
    const { jobId } = await consumer.jobs.submit.mutate(pi(50, 4));
    const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
    const stdout = Buffer.from("3 4\n");
    await worker.worker.report.mutate({
      machineId, leaseId: lease!.leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs: 40,
    });
    const job = await consumer.jobs.get.query({ jobId });
    expect(job.tasksDone).toBe(1);
    expect(job.estimate).toMatchObject({ basis: "measured-pace" });
    expect(job.estimate!.paidToProducers).toBeCloseTo(0.5 * job.workPerTask, 6); // one piece, however long it said it ran
    await consumer.jobs.cancel.mutate({ jobId });
  });
});
