import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, machineOffer, runLease, type TestLease } from "../support/worker.ts";

// Leases promise no more than a job is charged (costbenefit leaseBudget). A job quoted on a cheap
// machine that leaves has its task placed again on whatever is there, here only a machine whose
// piece is past what the quote has left: that machine is refused its lease, and the task must go
// to a machine that asks less as soon as one joins, the job completing at its quote.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a task handed back to a machine the job's price cannot pay", () => {
  it("is taken by a cheap machine that joins later, and the job completes at its quote", async () => {
    const consumer = await market.signUp("handback@handback.test", ["consumer"]);
    const { worker } = await market.signUpProducer("handback-seller@handback-seller.test");
    const cheap = await worker.worker.register.mutate(machineOffer("cheap", 0.5));
    const { jobId, decision } = await consumer.jobs.submit.mutate(catJob(1, { value: 100 }));
    expect(decision.outcome).toBe("admitted");
    // A dear machine joins, then the cheap one leaves: its queued task goes to the dear one, which is refused it.
    const dear = await worker.worker.register.mutate(machineOffer("dear", 500));
    await worker.worker.depart.mutate({ machineId: cheap.machineId });
    expect((await worker.worker.lease.mutate({ machineId: dear.machineId, max: 1 })).leases).toEqual([]);
    const later = await worker.worker.register.mutate(machineOffer("later", 0.5));
    try {
      for (let i = 0; i < 40 && (await consumer.jobs.get.query({ jobId })).status !== "completed"; i++) {
        const { leases } = await worker.worker.lease.mutate({ machineId: later.machineId, max: 2 });
        for (const l of leases.filter((x) => x.jobId === jobId)) await worker.worker.report.mutate(await runLease(worker, later.machineId, l as TestLease));
        await sleep(100);
      }
      const job = await consumer.jobs.get.query({ jobId });
      expect(job.status).toBe("completed");
      expect(job.charged).toBeCloseTo(decision.outcome === "admitted" ? decision.price! : NaN, 6);
    } finally {
      for (const m of [dear, later]) await worker.worker.depart.mutate({ machineId: m.machineId });
    }
    await expectLedgerBalances(market.manager.services.db);
  });
});
