import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TERMS } from "@cyclemarket/costbenefit";
import { exampleBytes } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { allowRefusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { leaseModule, runLease, type TestLease } from "../support/worker.ts";

// A consumer's work estimate is a claim: runs on machines of three other owners measure the work,
// and past 1.1 times the estimate the charge follows the measurement. But only runs reported
// within their lease measure anything, and a lease lasts three times the work the consumer
// declared (at least the floor). The attack: declare a hundredth of a second for tasks that take
// longer than the lease floor. Every honest run then ends after its lease: its result is still
// accepted (it is the task's first), but it measured nothing, so the estimate was never
// contradicted and the consumer paid the quote for a hundredth of a second a task. A late run now
// measures up to its lease's end, as a run held to its last moment would.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
  // Leases last at least a second instead of ten: the tasks below take about a second and a half.
  market.manager.services.market.settings.terms = { ...DEFAULT_TERMS, leaseFloorSeconds: 1 };
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a consumer declaring a hundredth of a second for tasks longer than a lease", () => {
  it("is charged for the work the honest runs measured", async () => {
    const consumer = await market.signUp("underdeclare@underdeclare.test", ["consumer"]);
    const producers = await Promise.all(
      ["late-a", "late-b", "late-c"].map(async (name) => {
        const client = await market.signUp(`${name}@${name}.test`, ["producer"]);
        const worker = market.tokenClient((await client.account.tokens.create.mutate({ name })).token);
        const { machineId } = await worker.worker.register.mutate({ name, kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 1, userAgent: "test" });
        return { client, worker, machineId };
      }),
    );
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate({
        name: "underdeclared",
        source: {
          kind: "upload",
          moduleBase64: Buffer.from(exampleBytes("montecarlo")).toString("base64"),
          // Each task samples 200 million points: more than a second on this machine.
          tasks: producers.map((_, i) => ({ args: ["200000000", String(i)], stdin: "" })),
          workPerTask: 0.01,
          memoryMbPerTask: 16,
        },
        benefit: { kind: "constant", value: 50 },
        maxSpend: 20,
      });
      expect(decision.outcome).toBe("admitted");
      const quoted = decision.outcome === "admitted" ? decision.price! : NaN;
      // The producers work as workers do: each asks for a task, runs it honestly and reports it as
      // soon as it is done (after its lease), and asks again, until the job is done. All three ask
      // before any runs, as three machines would at once: one after another, a task queued on a
      // machine that had not asked yet could move to one whose lease ran out, and the test would
      // measure two owners instead of three.
      let runs = 0;
      for (let round = 0; round < 60 && (await consumer.jobs.get.query({ jobId })).status !== "completed"; round++) {
        const held = [];
        for (const p of producers) {
          const [lease] = (await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 1 })).leases;
          if (lease) held.push({ p, lease: lease as TestLease, module: await leaseModule(p.worker, p.machineId, lease as TestLease) });
        }
        for (const { p, lease, module } of held) {
          const started = Date.now();
          const report = await runLease(p.worker, p.machineId, lease, undefined, module);
          expect(Date.now() - started).toBeGreaterThan(1000);
          await allowRefusal(p.worker.worker.report.mutate(report));
          runs += 1;
        }
        if (held.length === 0) await sleep(200);
      }
      expect(runs).toBeGreaterThanOrEqual(3);
      const job = await consumer.jobs.get.query({ jobId });
      // Before, no run measured the work (each was late): the consumer was charged the quote (0.15
      // credits) and each producer was paid 0.01 credits for over a second of work. A late run now
      // measures its lease's time: the estimate is contradicted and the charge follows the work,
      // up to the consumer's maxSpend.
      expect({ status: job.status, reason: job.chargeReasons[0]?.code, moreThanQuote: job.charged! > quoted + 1e-6, withinMaxSpend: job.charged! <= 20 }).toEqual({
        status: "completed",
        reason: "charged-measured-work",
        moreThanQuote: true,
        withinMaxSpend: true,
      });
    } finally {
      for (const p of producers) await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});
