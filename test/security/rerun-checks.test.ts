import { describe, expect, it } from "vitest";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, forgedReport, runLease, type TestLease } from "../support/worker.ts";
import { holdings, openMarket, type Producer } from "../support/one-person.ts";

// Attack: one person (consumer, a fresh producer, three producers with standing) makes a task's
// copies disagree until they reach their cap, so every copy, the added checks included, runs again
// (costbenefit verifyCopies rerun). On the rerun two copies agree and decide the task while the
// other checks still wait; they run after the decision and are judged alone. A check judged alone
// must be paid only from what the task's budget still holds (costbenefit copyPieces), or each one
// is paid the task's whole share again, by the escrow and then by the market's account.

const { market, db, marketBalance, producer } = openMarket();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Leased = TestLease & { jobId: string; pieceRate?: string };

/** One lease of the job on this machine, waiting for the sweeper to place it. */
async function leaseOne(p: Producer, jobId: string, taskPrefix?: string): Promise<Leased> {
  for (let i = 0; i < 60; i++) {
    const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 1 });
    const l = (leases as Leased[]).find((x) => x.jobId === jobId && (!taskPrefix || x.taskId.startsWith(taskPrefix)));
    if (l) return l;
    if (leases.length) throw new Error(`unexpected lease ${JSON.stringify(leases)}`);
    await sleep(100);
  }
  throw new Error("no lease");
}

async function honest(p: Producer, l: Leased) {
  return p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l));
}

/** The next lease of the job, on whichever of `ps` takes it: a check goes to the machine the market's draw names. */
async function leaseAny(ps: Producer[], jobId: string): Promise<{ p: Producer; l: Leased }> {
  for (let i = 0; i < 60; i++) {
    for (const p of ps) {
      const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 1 });
      const l = (leases as Leased[]).find((x) => x.jobId === jobId);
      if (l) return { p, l };
      if (leases.length) throw new Error(`unexpected lease ${JSON.stringify(leases)}`);
    }
    await sleep(100);
  }
  throw new Error("no lease");
}

const forged = (p: Producer, l: Leased, text: string) => p.worker.worker.report.mutate(forgedReport(p.machineId, l.leaseId, text));

describe("one person's copies that disagree until the task runs again", () => {
  it("cannot have the checks left waiting after the rerun's decision paid again", async () => {
    const buyer = await market().signUp("rr-buyer@rr-buyer.test", ["consumer"]);
    const fresh = await producer("rr-fresh", 0.01, false);
    const a = await producer("rr-a", 100, true);
    const b = await producer("rr-b", 100, true);
    const c = await producer("rr-c", 100, true);
    const all = [fresh, a, b, c];
    const before = (await holdings(buyer)) + (await Promise.all(all.map((p) => holdings(p.client)))).reduce((s, x) => s + x, 0);
    const marketBefore = await marketBalance();
    try {
      const { jobId, decision } = await buyer.jobs.submit.mutate(catJob(2, { value: 100, workPerTask: 1 }));
      expect(decision.outcome).toBe("admitted");

      // Round one: four copies, four outputs; the copies' cap is reached and all run again.
      const checkers = [a, b, c];
      const r0 = await leaseOne(fresh, jobId);
      await honest(fresh, r0);
      for (const text of ["Y", "Z", "W"]) {
        const { p, l } = await leaseAny(checkers, jobId);
        await forged(p, l, text);
      }

      // Round two: the fresh copy and the first check agree and decide; the other checks run
      // after, judged alone.
      const s0 = await leaseOne(fresh, jobId);
      await honest(fresh, s0);
      for (let i = 0; i < 3; i++) {
        const { p, l } = await leaseAny(checkers, jobId);
        await honest(p, l);
      }

      // The other task, honestly.
      for (let round = 0; round < 30 && (await buyer.jobs.get.query({ jobId })).status !== "completed"; round++) {
        for (const p of all) {
          const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 8 });
          for (const l of (leases as Leased[]).filter((x) => x.jobId === jobId)) await honest(p, l);
        }
        await sleep(150);
      }
      const job = await buyer.jobs.get.query({ jobId });
      expect(job.status).toBe("completed");
      const after = (await holdings(buyer)) + (await Promise.all(all.map((p) => holdings(p.client)))).reduce((s, x) => s + x, 0);
      expect(after - before, "what the person's accounts gained").toBeLessThanOrEqual(1e-6);
      expect((await marketBalance()) - marketBefore, "what the market's account gained").toBeGreaterThanOrEqual(-1e-6);
    } finally {
      for (const p of all) await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
    await expectLedgerBalances(db());
  });
});
