import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";
import { catJob, runLease, type TestLease } from "../support/worker.ts";

// A lease ends at the time fixed when it was handed out; the sweeper that ends leases runs about
// once a second. A result reported after that time, but before the sweeper reached its lease, was
// taken as on time: paid its piece at once, where a late one's piece is held in the escrow for the
// job's lateness (and relieves the consumer when the job ends late). A producer that holds its
// results could so escape the lateness it causes by reporting in that window. The market's clock
// now decides at the report's turn: past its end, a lease's result is late whatever the sweeper
// has done yet.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;

describe("a result reported after its lease's end, before the sweeper ended the lease", () => {
  it("is late: its piece is held for the job's lateness, not paid at once", async () => {
    const consumer = await market.signUp("overdue-buyer@overdue-buyer.test", ["consumer"]);
    const { worker } = await market.signUpProducer("overdue@overdue.test");
    const { machineId } = await worker.worker.register.mutate({ name: "overdue", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" });
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate(catJob(1, { value: 100 }));
      expect(decision.outcome).toBe("admitted");
      type Leased = Awaited<ReturnType<typeof worker.worker.lease.mutate>>["leases"][number];
      let lease: Leased | undefined;
      for (let i = 0; i < 50 && !lease; i++) lease = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases[0];
      expect(lease).toBeDefined();
      const report = await runLease(worker, machineId, lease as TestLease);
      // Its end has passed; the sweeper has not reached it (a lease being written is one it leaves alone).
      const live = market.manager.services.market.state.leases.get(lease!.leaseId)!;
      live.expiresAt = market.manager.services.market.clock.now() - 1000;
      live.writing = true;
      await worker.worker.report.mutate(report);
      expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");
      const result = await db().result.findUniqueOrThrow({ where: { id: lease!.leaseId }, select: { late: true, heldMicro: true, accepted: true } });
      expect(result).toMatchObject({ late: true, accepted: true });
      expect(result.heldMicro).toBe(BigInt(lease!.pieceRateMicro ?? "0"));
      expect(result.heldMicro).toBeGreaterThan(0n);
      // Held, then given to the producer by the job's settlement (the job was not late): no payment entry.
      expect(await db().ledgerEntry.count({ where: { jobId, kind: "payment" } })).toBe(0);
      await expectLedgerBalances(db());
    } finally {
      await worker.worker.depart.mutate({ machineId });
    }
  });
});
