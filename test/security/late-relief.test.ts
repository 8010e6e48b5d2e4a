import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TERMS } from "@cyclemarket/costbenefit";
import { exampleBytes } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { allowRefusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { leaseModule, runLease, type TestLease } from "../support/worker.ts";

// OPEN HOLE, kept as a runnable attack: the market does not withstand it yet, so the test is
// marked it.fails (Vitest fails the run once it passes: then the hole is closed and it becomes
// it()). docs/ARCHITECTURE.md, "Open holes", says what closing it needs.

// A consumer's work estimate sets how long every lease lasts (3 times it, at least the floor), and
// it is contradicted only once machines of three other owners measured the work. A late run's
// piece is held and pays the job's lateness first. The attack, by a consumer in a thin market (one
// producer runs the job): declare a hundredth of a second for tasks that take a second and a half,
// with a deadline curve the real work cannot meet. Every honest run ends after its lease; its
// result is accepted (the task's first) and its piece held; the job completes past the deadline,
// benefit 0, and the consumer is relieved of the lateness from the producer's held pieces, all of
// them: the producer is paid nothing for the job, the consumer pays the market's fee alone. One
// owner's samples do not contradict the estimate (workOwnersNeeded), so the lateness is not the
// consumer's own.
//
// Observed (3 tasks of 1.5 to 2 s each, ask 1 credit per reference second, declared 0.01 s a task,
// a deadline of 2 s, leases of 1 s): quote 0.106861; all three runs late, their pieces (0.01 each)
// held; charged 0.076861 (reasons charged-price, then lateness-relief fromLateProducers 0.03 and
// lateness-unfunded 0.076861): the producer is paid 0 for about 5 s of work, and the consumer has
// every result. Declared honestly, the leases last three times the work, every run is on time and
// the producer is paid its pieces.
//
// Why it stays open: a late run's own sample cannot tell a lease too short for the work (the
// consumer's estimate) from a producer that held its result (its clock and claimed speed, the
// first open hole), so one owner's runs cannot be believed against the estimate. Closing it needs
// the verified count of work the first open hole needs: a late run whose counted work is past what
// its lease was fixed for was late by the consumer's estimate, and its piece relieves nothing.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
  // Leases last at least a second instead of ten: the tasks below take about a second and a half.
  market.manager.services.market.settings.terms = { ...DEFAULT_TERMS, leaseFloorSeconds: 1 };
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a consumer under-declaring the work of a job with a deadline, in a thin market", () => {
  it.fails("does not get the lateness its own estimate caused paid from the honest producer's pieces", async () => {
    const consumer = await market.signUp("deadline-buyer@deadline-buyer.test", ["consumer"]);
    const client = await market.signUp("only-seller@only-seller.test", ["producer"]);
    const worker = market.tokenClient((await client.account.tokens.create.mutate({ name: "only" })).token);
    const { machineId } = await worker.worker.register.mutate({ name: "only", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 1, userAgent: "test" });
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate({
        name: "underdeclared with a deadline",
        source: {
          kind: "upload",
          moduleBase64: Buffer.from(exampleBytes("montecarlo")).toString("base64"),
          // Each task samples 200 million points: more than a second on this machine.
          tasks: [0, 1, 2].map((i) => ({ args: ["200000000", String(i)], stdin: "" })),
          workPerTask: 0.01,
          memoryMbPerTask: 16,
        },
        benefit: { kind: "deadline", value: 50, deadline: 2 },
      });
      expect(decision.outcome).toBe("admitted");
      const quoted = decision.outcome === "admitted" ? decision.price! : NaN;
      // The producer works as a worker does: asks for a task, runs it honestly, reports it as soon
      // as it is done (after its lease), and asks again, until the job is done.
      let runs = 0;
      for (let round = 0; round < 30 && (await consumer.jobs.get.query({ jobId })).status !== "completed"; round++) {
        const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
        if (!lease) {
          await sleep(200);
          continue;
        }
        const module = await leaseModule(worker, machineId, lease as TestLease);
        const report = await runLease(worker, machineId, lease as TestLease, undefined, module);
        // The sandbox runs in this process and holds the market's event loop meanwhile: the pause
        // lets its sweeper see the time that passed, as it would while a real machine ran the task.
        await sleep(1500);
        await allowRefusal(worker.worker.report.mutate(report));
        runs += 1;
      }
      const job = await consumer.jobs.get.query({ jobId });
      const earned = (await client.ledger.statement.query()).producerBalance;
      expect(job.status).toBe("completed");
      // Every run was late (its lease of 1 s ended first); the consumer got every result.
      const outputs = await consumer.jobs.outputs.query({ jobId, fromIndex: 0, limit: 10 });
      expect(outputs).toHaveLength(3);
      // The producer's pieces (0.01 a task, already a hundredth of the work) were all taken to relieve
      // the consumer of a lateness the consumer's own estimate made: the producer is paid nothing.
      expect(earned, "what the only producer was paid for the job's three runs").toBeGreaterThan(0);
      expect(job.charged!, "what the consumer was charged").toBeCloseTo(quoted, 6);
    } finally {
      await worker.worker.depart.mutate({ machineId });
    }
    await expectLedgerBalances(db());
  });
});
