import { describe, expect, it } from "vitest";
import { expectLedgerBalances, marketMicro } from "../support/books.ts";
import { holdings, reserveMarket } from "../support/one-person.ts";
import { catJob, machineOffer, runLease, type TestLease } from "../support/worker.ts";

// The attack, by one person with three accounts: a consumer and two producers (two owners, two
// domains) with one dear machine each, asking 100 credits a reference second. The consumer's
// one-task job (1 s of work) is admitted at a quote of 110.02, the dear machines being the only
// ones. The machine the task is placed on reports that the program exited with 1; the task runs
// next on the other owner's machine, which reports the same: the failure is confirmed, and every
// run that failed so was paid its lease's piece, 100 each. The job failed and was charged the
// quote (its failed task counts as done); the escrow paid 110.02 of the 200 and the market's
// account the rest. Observed: the person's accounts gained 89.98 credits a job, the market's
// account lost as much (with asks a hundred times higher, a hundred times more).
//
// The runs of a confirmed failure are now paid within the task's share of the quote (costbenefit
// failurePieces), in the order they failed: as retries are, from the market's fee.

const RESERVE = 100_000;
const { market, db } = reserveMarket(RESERVE);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const machine = machineOffer;

describe("a failure two of one person's machines confirm on their own consumer's job", () => {
  it("pays the failed runs no more than the job is charged", async () => {
    const consumer = await market().signUp("fail-buyer@fail-buyer.test", ["consumer"]);
    const a = await market().signUpProducer("fail-a@fail-a.test");
    const b = await market().signUpProducer("fail-b@fail-b.test");
    const marketBefore = await marketMicro(db());
    const before = (await holdings(consumer)) + (await holdings(a.producer)) + (await holdings(b.producer));
    const { machineId: aId } = await a.worker.worker.register.mutate(machine("a", 100));
    const { machineId: bId } = await b.worker.worker.register.mutate(machine("b", 100));
    const { jobId, decision } = await consumer.jobs.submit.mutate(catJob(1, { value: 900, workPerTask: 1 }));
    expect(decision.outcome).toBe("admitted");
    const quoted = decision.outcome === "admitted" ? decision.price! : NaN;
    try {
      // The machine the task is placed on leases it first and says the program exited with 1; the
      // other, the only other owner, runs it next and says the same: the failure is confirmed.
      const machines = [
        { w: a.worker, id: aId },
        { w: b.worker, id: bId },
      ];
      for (let run = 0; run < 2; run++) {
        let leased: { m: (typeof machines)[number]; lease: TestLease } | undefined;
        for (let i = 0; i < 20 && !leased; i++) {
          for (const m of machines) {
            const [lease] = (await m.w.worker.lease.mutate({ machineId: m.id, max: 1 })).leases;
            if (lease?.jobId === jobId) {
              leased = { m, lease: lease as TestLease };
              break;
            }
          }
          if (!leased) await sleep(200);
        }
        expect(leased, `run ${run + 1} leased`).toBeDefined();
        const report = await runLease(leased!.m.w, leased!.m.id, leased!.lease);
        await leased!.m.w.worker.report.mutate({ ...report, exitCode: 1 });
      }
      expect((await consumer.jobs.get.query({ jobId })).status).toBe("failed");
      const after = (await holdings(consumer)) + (await holdings(a.producer)) + (await holdings(b.producer));
      const marketLost = Number(marketBefore - (await marketMicro(db()))) / 1e6;
      // Before: both runs were paid their pieces, 100 each, the consumer charged the quote
      // (110.02): the person's accounts gained 89.98 and the market's account lost them.
      expect({ personGained: after - before > 1e-6, marketLost: marketLost > 1e-6 }).toEqual({ personGained: false, marketLost: false });
      expect(quoted).toBeLessThan(200);
    } finally {
      await a.worker.worker.depart.mutate({ machineId: aId });
      await b.worker.worker.depart.mutate({ machineId: bId });
    }
    await expectLedgerBalances(db());
  });
});
