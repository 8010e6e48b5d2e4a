import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob } from "../support/worker.ts";

// The attack, by a producer against a consumer it does not know: it leases the consumer's task
// and reports that its own sandbox crashed (a worker's own trouble, never the program's: no run is
// paid for it and nobody can confirm it), and again, as often as the task comes back to it. After
// three failed runs without a confirmed failure the task is given up and the job fails. A job
// that ends unfinished is charged the quote's share of its tasks done, and a task whose run
// failed, unconfirmed, counted as done ("its failure is an answer too"): but a crash of the
// producer's sandbox says nothing of the program. Observed: a one-task job quoted 0.0296, failed
// with no output after three reported crashes, charged 0.029589: the whole quote, for nothing.
//
// Only a failure that can be the program's (costbenefit programFailure) now counts as done for the
// charge: runs that failed for their worker's own trouble are as if they never ran.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;

describe("a producer reporting its own sandbox's crash on a consumer's task, again and again", () => {
  it("does not make the consumer pay for a task nobody ran", async () => {
    const consumer = await market.signUp("crash-victim@crash-victim.test", ["consumer"]);
    const { worker } = await market.signUpProducer("crasher@crasher.test");
    const { machineId } = await worker.worker.register.mutate({ name: "crasher", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" });
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate(catJob(1, { value: 100 }));
      expect(decision.outcome).toBe("admitted");
      let crashes = 0;
      for (let i = 0; i < 10 && (await consumer.jobs.get.query({ jobId })).status !== "failed"; i++) {
        const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
        if (!lease) continue;
        await worker.worker.report.mutate({ machineId, leaseId: lease.leaseId, exitCode: 1, stdout: "", stderr: "", outputHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", elapsedMs: 5, error: { code: "crashed", message: "the sandbox crashed" } });
        crashes += 1;
      }
      const job = await consumer.jobs.get.query({ jobId });
      expect({ status: job.status, crashes }).toEqual({ status: "failed", crashes: 3 });
      expect(await consumer.jobs.outputs.query({ jobId, fromIndex: 0, limit: 10 })).toHaveLength(0);
      expect(job.charged, "what the consumer was charged for a task nobody ran").toBe(0);
    } finally {
      await worker.worker.depart.mutate({ machineId });
    }
    await expectLedgerBalances(db());
  });
});
