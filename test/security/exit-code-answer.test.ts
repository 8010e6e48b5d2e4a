import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { runLease, type TestLease } from "../support/worker.ts";
import { expectLedgerBalances } from "../support/books.ts";

// A consumer whose program puts its answer in its exit code: the first run fails (exit N), is paid
// nothing until another owner's run fails the same way, and the job's page lists its failure code
// once the rerun is leased. The consumer's second account leases the rerun and sits on it; the
// consumer reads the answer on the job's page and cancels. Were a task whose run failed, not yet
// confirmed, charged nothing, the answer would be free (2.76 credits quoted, 0 charged): it counts
// as done for the charge (costbenefit settleUnfinishedJob).

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const ANSWER = 123456789;
const EXIT_WAT = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const ${ANSWER}))))`;

describe("an answer in a failed run's exit code", () => {
  it("is not the consumer's for free by cancelling before the failure is confirmed", async () => {
    const consumer = await market.signUp("exit-buyer@exit-buyer.test", ["consumer"]);
    const { worker } = await market.signUpProducer("exit-victim@exit-victim.test");
    const { machineId } = await worker.worker.register.mutate({ name: "victim", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" });
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    // The consumer's own second account: a machine that leases the rerun and never reports it.
    const { worker: own } = await market.signUpProducer("exit-own@exit-own.test");
    const ownMachine = await own.worker.register.mutate({ name: "own", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" });
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "search",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(EXIT_WAT)).toString("base64"), tasks: [{ args: [] }], workPerTask: 5, memoryMbPerTask: 16 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("admitted");
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 2 });
    const report = await runLease(worker, machineId, leases[0] as TestLease);
    await worker.worker.report.mutate(report);
    let codes: string[] = [];
    let rerunLeased = 0;
    for (let i = 0; i < 30 && !codes.length; i++) {
      rerunLeased += (await own.worker.lease.mutate({ machineId: ownMachine.machineId, max: 2 })).leases.length;
      codes = (await consumer.jobs.get.query({ jobId })).failures.tasks.flatMap((t) => t.codes);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The page shows how the task ended: the consumer has the answer.
    expect(codes.join()).toContain(String(ANSWER));
    expect(rerunLeased).toBeGreaterThan(0);
    await consumer.jobs.cancel.mutate({ jobId });
    const after = (await consumer.ledger.statement.query()).consumerBalance;
    const price = decision.outcome === "admitted" ? decision.price! : NaN;
    const job = await consumer.jobs.get.query({ jobId });
    expect({ status: job.status, charged: +(before - after).toFixed(6), reason: job.chargeReasons[0]?.code }).toEqual({ status: "cancelled", charged: +price.toFixed(6), reason: "charged-share" });
    await expectLedgerBalances(market.manager.services.db);
  });
});
