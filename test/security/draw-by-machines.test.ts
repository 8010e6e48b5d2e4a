import { describe, expect, it } from "vitest";
import { catJob, runLease, type TestLease } from "../support/worker.ts";
import { openMarket, producerWithMachine, type Producer } from "../support/one-person.ts";

// Attack: the machine a check runs on is drawn from the market's secret seed among the connected
// machines with standing that hold no copy of the task (replicas.ts drawnFor). The draw ranked
// machines, so an account with standing had as many tickets as machines it registered: machines
// cost nothing to register. One person's account B registers 10 machines; four honest accounts
// with standing have one each. A fresh account's 20 results each need one check.
//
// Observed before the fix (20 checks, three runs): B ran 14, 15 and 18 (10/14 expected), the four
// honest accounts the rest. The same weight lets a person with three accounts with standing, each with ten machines,
// take both tie-breaks of a victim's contest (20/24 · 10/14 = 60% of tasks, against 1 in 15 when
// accounts are drawn): three forged votes against one honest lead by two (CONTEST_MARGIN), the
// forged output is accepted and the honest producer branded a forger, its pay forfeited.
//
// The fix: the draw ranks verifiers (an account, or one confirmed domain), then one of the drawn
// verifier's machines; a verifier whose drawn machine leaves the copy waiting is passed over
// whole. B now runs about one check in five, whatever machines it registers (observed: 2 of 20).

const { market, db } = openMarket();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Leased = TestLease & { jobId: string };
const CHECKS = 20;

async function machineOf(p: Producer, name: string): Promise<Producer> {
  const { machineId } = await p.worker.worker.register.mutate({ name, kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" });
  return { ...p, machineId };
}

describe("one account with standing registering many machines", () => {
  it("is not drawn to run checks more often than an account with one machine", async () => {
    const m = market();
    const buyer = await m.signUp("dm-buyer@dm-buyer.test", ["consumer"]);
    const fresh = await producerWithMachine(m, "dm-fresh", 0.01, false);
    const { machineId } = await fresh.worker.worker.register.mutate({ name: "dm-fresh-big", kind: "opportunistic", slots: 32, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
    const freshBig = { ...fresh, machineId };
    const { jobId, decision } = await buyer.jobs.submit.mutate(catJob(CHECKS, { value: 500, workPerTask: 1 }));
    expect(decision.outcome).toBe("admitted");
    const all: Producer[] = [fresh, freshBig];
    try {
      // The fresh account runs every task: each result waits for a check.
      let ran = 0;
      for (let i = 0; i < 60 && ran < CHECKS; i++) {
        for (const p of [fresh, freshBig]) {
          const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 32 });
          for (const l of leases as Leased[]) if (l.jobId === jobId) {
            await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l));
            ran++;
          }
        }
        if (ran < CHECKS) await sleep(100);
      }
      expect(ran).toBe(CHECKS);
      for (const p of [fresh, freshBig]) await p.worker.worker.depart.mutate({ machineId: p.machineId });
      // The checkers: B with ten machines, four honest accounts with one each.
      const b = await producerWithMachine(m, "dm-b", 0.5, true);
      const checkers: Producer[] = [b];
      for (let i = 1; i < 10; i++) checkers.push(await machineOf(b, `dm-b-${i}`));
      for (let i = 0; i < 4; i++) checkers.push(await producerWithMachine(m, `dm-e${i}`, 0.5, true));
      all.push(...checkers);
      for (let round = 0; round < 60; round++) {
        for (const p of checkers) {
          const { leases } = await p.worker.worker.lease.mutate({ machineId: p.machineId, max: 8 });
          for (const l of leases as Leased[]) if (l.jobId === jobId) await p.worker.worker.report.mutate(await runLease(p.worker, p.machineId, l));
        }
        const job = await buyer.jobs.get.query({ jobId });
        if (job.status === "completed" || job.status === "failed") break;
        await sleep(100);
      }
      expect((await buyer.jobs.get.query({ jobId })).status).toBe("completed");
      const bId = (await db().user.findUniqueOrThrow({ where: { email: "dm-b@dm-b.test" } })).id;
      const checks = await db().lease.findMany({ where: { task: { jobId, replica: { gte: 1 } }, status: "completed" }, select: { machine: { select: { ownerId: true } } } });
      const byB = checks.filter((c) => c.machine.ownerId === bId).length;
      expect(checks.length).toBe(CHECKS);
      // One account in five: about 4 of 20. Ten machines drawn as ten tickets: about 14.
      expect(byB, "checks run by the account with ten machines").toBeLessThanOrEqual(9);
    } finally {
      for (const p of all.slice(2)) await p.worker.worker.depart.mutate({ machineId: p.machineId });
    }
  });
});
