import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { runLease, type TestLease } from "../support/worker.ts";

// OPEN HOLE, kept as a runnable attack: the market does not withstand it yet, so the test is
// marked it.fails (Vitest fails the run once it passes: then the hole is closed and it becomes
// it()). docs/ARCHITECTURE.md, "Open holes", says what closing it needs.

// A job without a work estimate runs three pilots first; the rest is planned and priced at the
// work the pilots measured, and one owner's runs are enough to measure it (costbenefit
// pilotWork). A sample is the market's clock between lease and report, lowered by the reported
// time, times the machine's speed: the held time and the claimed benchmark, both the producer's
// to choose. The attack, by one producer: a machine claiming speed 50 runs the three pilots of a
// victim's job honestly (a few milliseconds each) and reports each a few tens of milliseconds
// later, aiming the measured work so the rest's price just fits the victim's benefit. The rest is
// admitted at that work, and the same machine is paid for it.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("one producer that holds its pilots' results on a machine claiming speed 50", () => {
  it.fails("cannot set the work the rest of a job without an estimate is priced at", async () => {
    const victim = await market.signUp("pilot-victim@pilot-victim.test", ["consumer"]);
    const seller = await market.signUp("pilot-holder@pilot-holder.test", ["producer"]);
    const worker = market.tokenClient((await seller.account.tokens.create.mutate({ name: "rack" })).token);
    // 1 credit per reference second of work.
    const { machineId } = await worker.worker.register.mutate({ name: "rack", kind: "opportunistic", slots: 4, speed: 50, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 50, userAgent: "test" });
    try {
      const { jobId, decision } = await victim.jobs.submit.mutate({
        name: "no estimate",
        source: { kind: "upload", moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"), tasks: Array.from({ length: 20 }, (_, i) => ({ args: [], stdin: Buffer.from(`line ${i}`).toString("base64") })), memoryMbPerTask: 16 },
        benefit: { kind: "constant", value: 50 },
      });
      expect(decision).toMatchObject({ outcome: "admitted", provisional: true, pilots: 3 });
      const pilotPrice = decision.outcome === "admitted" ? decision.price! : NaN;
      // Aimed at half a reference second a task: held 10 ms on a machine claiming 50.
      const claimedMs = 10;
      for (const until = Date.now() + 30_000; Date.now() < until; await sleep(100)) {
        const job = await victim.jobs.get.query({ jobId });
        if (job.status !== "admitted" && job.status !== "running") break;
        const leases = (await worker.worker.lease.mutate({ machineId, max: 8 })).leases.filter((l) => l.jobId === jobId);
        const reports = await Promise.all(leases.map((l) => runLease(worker, machineId, l as TestLease, claimedMs)));
        await sleep(claimedMs + 20);
        for (const r of reports) await worker.worker.report.mutate(r);
      }
      const job = await victim.jobs.get.query({ jobId });
      const { workPerTask } = await db().job.findUniqueOrThrow({ where: { id: jobId }, select: { workPerTask: true } });
      const earned = (await seller.ledger.statement.query()).producerBalance;
      // Each task does a few milliseconds of reference work: the twenty cost producers well under a
      // credit at this ask, and the victim pays the pilots' stated price and a rest priced at that.
      // HOLE: the rest is priced at half a reference second a task; the victim is charged 42.5
      // credits (9.4 more) and the producer earns 10.
      expect({ status: job.status, workPerTask, earned: +earned.toFixed(6), charged: job.charged! }).toEqual({
        status: "completed",
        workPerTask: expect.toSatisfy((w: number) => w < 0.1),
        earned: expect.toSatisfy((e: number) => e < 1),
        charged: expect.toSatisfy((c: number) => c < pilotPrice + 1),
      });
    } finally {
      await worker.worker.depart.mutate({ machineId });
    }
    await expectLedgerBalances(db());
  });
});
