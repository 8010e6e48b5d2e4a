import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { runLease } from "../support/worker.ts";

// A task whose job cannot pay a machine's piece waits for a machine that asks less; the tasks
// queued behind it on that machine are still leased.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "3000" });
});
afterAll(() => market?.stop());

it("a machine whose first queued task its job cannot pay still leases the tasks behind it", async () => {
  const consumer = await market.signUp("queue-buyer@example.test", ["consumer"]);
  const producer = await market.signUp("queue-seller@example.test", ["producer"]);
  const worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "racks" })).token);
  const machine = (name: string, pricePerSecond: number) =>
    worker.worker.register.mutate({ name, kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond, userAgent: "test" });
  // Tasks short enough to run here between heartbeats (the run blocks this process) within the
  // lease timeout, on a loaded machine too.
  const submit = (name: string) =>
    consumer.jobs.submit.mutate({ name, source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 10_000_000 }, taskCount: 1 }, benefit: { kind: "constant", value: 100 } });

  const cheap = await machine("cheap", 0.001);
  const dear = await machine("dear", 1);
  // Priced on the cheap machine, then handed to the dear one when the cheap one leaves: its
  // escrow cannot pay the dear machine's piece.
  const stranded = await submit("priced cheap");
  expect(stranded.decision.outcome).toBe("admitted");
  await worker.worker.depart.mutate({ machineId: cheap.machineId });
  // Priced on the dear machine, queued behind it.
  const next = await submit("priced dear");
  expect(next.decision.outcome).toBe("admitted");

  const { leases } = await worker.worker.lease.mutate({ machineId: dear.machineId, max: 1 });
  expect(leases.map((l) => l.jobId)).toEqual([next.jobId]);
  // The stranded task is still queued, waiting for a machine its job can pay.
  const job = await consumer.jobs.get.query({ jobId: stranded.jobId });
  expect(job.tasks.queued + job.tasks.pending).toBe(1);

  // The machine delivers and keeps heartbeating without asking again: a queue holding only what it
  // cannot be paid for is not one it fails to lease, so it stays past the lease timeout.
  await worker.worker.report.mutate(await runLease(worker, dear.machineId, leases[0]!));
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 500));
    await worker.worker.heartbeat.mutate({ machineId: dear.machineId, leaseIds: [] });
  }
  const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: dear.machineId } });
  expect(row.status).toBe("active");
});
