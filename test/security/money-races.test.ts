import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { allowRefusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances, marketMicro } from "../support/books.ts";
import { catJob, runLease, type TestLease } from "../support/worker.ts";

// Money moved by calls sent at the same moment, as a participant racing the market would send
// them: a cancel among the job's own reports (a consumer and a producer in league, hoping the
// market pays runs the cancelled escrow no longer holds), one report sent by several calls at
// once, and many moves of one producer's earnings at once. Each must move money once, from the
// account the rule names, and leave the market's own account as it was.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;

beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;

async function seller(name: string, slots: number): Promise<{ client: Client; worker: Worker; machineId: string }> {
  const client = await market.signUp(`${name}@${name}.test`, ["producer", "consumer"]);
  const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
  const { machineId } = await worker.worker.register.mutate({ name, kind: "opportunistic", slots, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 1, userAgent: "test" });
  return { client, worker, machineId };
}

const cat = (tasks: number) => catJob(tasks, { value: 50 });


/** What a cancelled job is charged: the quote's share of its tasks done, or what its runs were paid when that is more. */
const cancelCharge = (job: { quotedPriceMicro: bigint | null; tasksDone: number }, paidMicro: bigint) => {
  const share = ((job.quotedPriceMicro ?? 0n) * BigInt(job.tasksDone)) / 16n;
  return share > paidMicro ? share : paidMicro;
};
const closeTo = (a: bigint, b: bigint) => a - b <= 1n && b - a <= 1n;

/** What the job's payment entries credited producers, and what they took from the market's account. */
async function paymentsOf(jobId: string) {
  const entries = await db().ledgerEntry.findMany({ where: { jobId, kind: "payment" }, include: { postings: { include: { account: true } } } });
  const postings = entries.flatMap((e) => e.postings);
  const sum = (kind: string) => postings.filter((p) => p.account.kind === kind).reduce((s, p) => s + p.amountMicro, 0n);
  return { toProducers: sum("producer"), fromMarket: -sum("market") };
}

describe("a cancel sent among the job's last reports", () => {
  it("pays each accepted run once and from the escrow, and charges the quote's share of the tasks done, or their pieces when more", async () => {
    const buyer = await market.signUp("racer@buyer.test", ["consumer"]);
    const p = await seller("race-seller", 8);
    try {
      for (let round = 0; round < 4; round++) {
        const { jobId, decision } = await buyer.jobs.submit.mutate(cat(16));
        expect(decision.outcome).toBe("admitted");
        const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 16 });
        expect(leases.length).toBe(16);
        const reports = await Promise.all(leases.map((l) => runLease(p.worker, p.machineId, l as TestLease)));
        const marketBefore = await marketMicro(db());
        // Every report goes out, and the cancel a little later each round: among the first, the middle, the last.
        const sent = reports.map((r) => allowRefusal(p.worker.worker.report.mutate(r)));
        await new Promise((r) => setTimeout(r, [0, 8, 25, 60][round]));
        await Promise.all([...sent, allowRefusal(buyer.jobs.cancel.mutate({ jobId }))]);
        // Late reports after the cancel are refused, not paid.
        for (const r of reports) await allowRefusal(p.worker.worker.report.mutate(r));

        const job = await db().job.findUniqueOrThrow({ where: { id: jobId }, select: { status: true, chargedMicro: true, quotedPriceMicro: true, tasksDone: true } });
        const paid = await db().result.findMany({ where: { lease: { task: { jobId } }, paidMicro: { not: null } }, select: { paidMicro: true } });
        const paidMicro = paid.reduce((s, r) => s + r.paidMicro!, 0n);
        const { toProducers, fromMarket } = await paymentsOf(jobId);
        const escrow = await db().ledgerAccount.findFirst({ where: { kind: "escrow", jobId } });
        expect({ round, status: job.status, charged: job.chargedMicro, toProducers, fromMarket, escrow: escrow?.balanceMicro ?? 0n, marketChange: (await marketMicro(db())) - marketBefore }).toEqual({
          round,
          status: job.status === "completed" ? "completed" : "cancelled",
          // A completed job is charged its quote; a cancelled one the quote's share of its tasks
          // done, or what its accepted runs were paid when that is more (to a micro-credit).
          charged: job.status === "completed" || closeTo(job.chargedMicro!, cancelCharge(job, paidMicro)) ? job.chargedMicro : cancelCharge(job, paidMicro),
          toProducers: paidMicro,
          fromMarket: 0n,
          escrow: 0n,
          // The market keeps what the job was charged beyond its producers' pieces, and pays nothing.
          marketChange: job.chargedMicro! - paidMicro,
        });
        expect(paid.length).toBeLessThanOrEqual(16);
      }
    } finally {
      await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});

describe("one report sent by several calls at once", () => {
  it("is paid once", async () => {
    const buyer = await market.signUp("dup@buyer.test", ["consumer"]);
    const p = await seller("dup-seller", 2);
    try {
      const { jobId } = await buyer.jobs.submit.mutate(cat(2));
      const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 2 });
      expect(leases.length).toBe(2);
      const reports = await Promise.all(leases.map((l) => runLease(p.worker, p.machineId, l as TestLease)));
      await Promise.all(reports.flatMap((r) => Array.from({ length: 8 }, () => allowRefusal(p.worker.worker.report.mutate(r)))));
      const job = await buyer.jobs.get.query({ jobId });
      expect(job.status).toBe("completed");
      expect((await paymentsOf(jobId)).toProducers).toBe(20_000n); // 2 runs x 0.01 reference seconds x 1 credit
      expect((await p.client.ledger.statement.query()).producerBalance).toBeCloseTo(0.02, 9);
    } finally {
      await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});

describe("many moves of one producer's earnings at once", () => {
  it("move no more than the earnings, whether each asks for all of them or for a part", async () => {
    const buyer = await market.signUp("earner-buyer@buyer.test", ["consumer"]);
    const p = await seller("earner", 4);
    try {
      const { jobId } = await buyer.jobs.submit.mutate(cat(4));
      const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 4 });
      for (const l of leases) await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l as TestLease));
      expect((await buyer.jobs.get.query({ jobId })).status).toBe("completed");
      const before = await p.client.ledger.statement.query();
      expect(before.producerBalance).toBeCloseTo(0.04, 9);
      // Ten moves of all of it and ten of three quarters of it, each with its own id, at once.
      const moves = [
        ...Array.from({ length: 10 }, () => ({ transferId: randomUUID() })),
        ...Array.from({ length: 10 }, () => ({ transferId: randomUUID(), credits: 0.03 })),
      ];
      const answers = await Promise.allSettled(moves.map((m) => p.client.ledger.transferEarnings.mutate(m)));
      const moved = answers.reduce((s, a) => s + (a.status === "fulfilled" ? a.value.moved : 0), 0);
      const after = await p.client.ledger.statement.query();
      expect(moved).toBeCloseTo(0.04, 9);
      expect(after.producerBalance).toBeCloseTo(0, 9);
      expect(after.consumerBalance - before.consumerBalance).toBeCloseTo(0.04, 9);
    } finally {
      await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});
