import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, runLease, type TestLease } from "../support/worker.ts";
import { holdings, openMarket, type Producer } from "../support/one-person.ts";

// Copies the market adds to verify a result (a fresh account's, a spot check, a tie-break). The
// attack, by one person with three accounts in an open market: a consumer, a fresh producer asking
// next to nothing (its machine wins the placement, so the quote is tiny), and a producer with
// standing asking a great deal. Every result of the fresh account must be run again on a machine
// of an account with standing; when the person's is the only one free to run it (a thin market, or
// a job whose memory only their machines offer), a market paying checks at the checker's ask pays
// them about 400 credits on a quote of 0.024. A check is paid within its task's share of the quote
// (costbenefit copyPieces), so the person gets back at most what they paid.

const { market, db, marketBalance, producer } = openMarket();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runWhatIsLeased(p: Producer, jobId: string) {
  const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 8 });
  for (const l of leases.filter((x) => x.jobId === jobId)) await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l as TestLease));
  return leases.length;
}

describe("one person's fresh producer and producer with standing", () => {
  it("cannot have the market pay the verification copies of their own job at any price", async () => {
    const buyer = await market().signUp("farm-buyer@farm-buyer.test", ["consumer"]);
    // The fresh account asks the least one may; the one with standing 100 credits a second.
    const fresh = await producer("farm-fresh", 0.000001, false);
    const verifier = await producer("farm-standing", 100, true);
    const before = (await holdings(buyer)) + (await holdings(fresh.client)) + (await holdings(verifier.client));
    const marketBefore = await marketBalance();
    try {
      const { jobId, decision } = await buyer.jobs.submit.mutate(catJob(4, { value: 100, workPerTask: 1 }));
      expect(decision.outcome).toBe("admitted");
      for (let round = 0; round < 30 && (await buyer.jobs.get.query({ jobId })).status !== "completed"; round++) {
        await runWhatIsLeased(fresh, jobId);
        await runWhatIsLeased(verifier, jobId);
        await sleep(150);
      }
      const job = await buyer.jobs.get.query({ jobId });
      expect(job.status).toBe("completed");
      const after = (await holdings(buyer)) + (await holdings(fresh.client)) + (await holdings(verifier.client));
      // Honest play of the same job leaves the person the quote poorer, less the pieces their own
      // machines earn, and the market keeps its fee.
      expect(after - before, "what the person's accounts gained").toBeLessThanOrEqual(1e-6);
      expect((await marketBalance()) - marketBefore, "what the market's account gained").toBeGreaterThanOrEqual(-1e-6);
    } finally {
      for (const p of [fresh, verifier]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});
