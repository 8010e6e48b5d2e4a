import { describe, expect, it } from "vitest";
import { expectLedgerBalances, marketMicro } from "../support/books.ts";
import { holdings, reserveMarket } from "../support/one-person.ts";
import { catJob, machineOffer, runLease, type TestLease } from "../support/worker.ts";

// The attack, by one person with three accounts: a consumer, a producer asking little, a producer
// asking a great deal. The consumer submits a one-task job with a maxSpend far above its quote, so
// its escrow holds the maxSpend. The cheap machine wins the placement, leases the task and reports
// a failure of the program (an exit code it made up); the task runs next elsewhere, and the dear
// machine, the only other, takes it. A lease was handed out whenever the job's escrow could pay its
// piece, and the escrow held the maxSpend (500). The estimate held, so the consumer was charged the
// quote and got the rest of the maxSpend back: the market's account paid the difference. Observed:
// quote 0.029589, the dear machine paid 450, the job completed and charged 0.029589; the person's
// accounts gained 449.970411 credits and the market's account lost as much. Repeated with the
// earnings moved to the consumer, it drains the market's reserve.
//
// A lease now fits its job's budget only within what the job can be charged: the quote while the
// estimate holds (retries paid from its fee), what the measured work is charged (up to the escrow)
// once it is contradicted (costbenefit leaseBudget). The dear machine's lease is refused, the task
// waits for a machine that asks less.

const RESERVE = 100_000;
const { market, db } = reserveMarket(RESERVE);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const machine = machineOffer;

describe("a dear machine taking a task whose first run failed", () => {
  it("is paid no more than the job can be charged, not what the consumer's maxSpend put in escrow", async () => {
    const consumer = await market().signUp("drain-buyer@drain-buyer.test", ["consumer"]);
    const cheap = await market().signUpProducer("drain-cheap@drain-cheap.test");
    const dear = await market().signUpProducer("drain-dear@drain-dear.test");
    const marketBefore = await marketMicro(db());
    const before = (await holdings(consumer)) + (await holdings(cheap.producer)) + (await holdings(dear.producer));
    const { machineId: cheapId } = await cheap.worker.worker.register.mutate(machine("cheap", 0.5));
    const { jobId, decision } = await consumer.jobs.submit.mutate(catJob(1, { value: 100, maxSpend: 500 }));
    expect(decision.outcome).toBe("admitted");
    const quoted = decision.outcome === "admitted" ? decision.price! : NaN;
    // 45,000 credits a second: a piece of 450 for the task's declared 0.01 s.
    const { machineId: dearId } = await dear.worker.worker.register.mutate(machine("dear", 45_000));
    try {
      const [first] = (await cheap.worker.worker.lease.mutate({ machineId: cheapId, max: 1 })).leases;
      expect(first?.jobId).toBe(jobId);
      // The cheap machine says the program exited with 1: unconfirmed, the task runs next elsewhere.
      const report = await runLease(cheap.worker, cheapId, first as TestLease);
      await cheap.worker.worker.report.mutate({ ...report, exitCode: 1 });
      let taken = false;
      for (let i = 0; i < 15 && !taken; i++) {
        const [lease] = (await dear.worker.worker.lease.mutate({ machineId: dearId, max: 1 })).leases;
        if (lease) {
          taken = true;
          await dear.worker.worker.report.mutate(await runLease(dear.worker, dearId, lease as TestLease));
        } else await sleep(200);
      }
      const job = await consumer.jobs.get.query({ jobId });
      if (job.status !== "completed") await consumer.jobs.cancel.mutate({ jobId });
      const after = (await holdings(consumer)) + (await holdings(cheap.producer)) + (await holdings(dear.producer));
      const marketLost = Number(marketBefore - (await marketMicro(db()))) / 1e6;

      // Before: the dear machine was paid 450, the consumer charged the quote (0.03) and refunded the
      // rest of its 500: the person's accounts gained 449.97 and the market's account lost them.
      expect({ personGained: after - before > 1e-6, marketLost: marketLost > 1e-6 }).toEqual({ personGained: false, marketLost: false });
      expect(quoted).toBeLessThan(1);
    } finally {
      await cheap.worker.worker.depart.mutate({ machineId: cheapId });
      await dear.worker.worker.depart.mutate({ machineId: dearId });
    }
    await expectLedgerBalances(db());
  });
});
