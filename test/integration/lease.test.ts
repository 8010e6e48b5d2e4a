import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { marketWithMachine, runLease, type TestLease } from "../support/worker.ts";

// A worker's round trip over real HTTP against a real PostgreSQL: register, lease, fetch the
// module, run the task in the WASI sandbox, report, and the job completes with its result.

let market: TestMarket;
type Client = ReturnType<TestMarket["tokenClient"]>;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let worker: Client;
let intruder: Client;
let machineId: string;

beforeAll(async () => {
  market = await startTestMarket();
  ({ consumer, worker, machineId } = await marketWithMachine(market));
  const other = await market.signUp("other@example.test", ["producer"]);
  intruder = market.tokenClient((await other.account.tokens.create.mutate({ name: "x" })).token);
});
afterAll(() => market?.stop());

const run = (lease: TestLease) => runLease(worker, machineId, lease);

describe("worker lease round trip", () => {
  it("runs a Monte Carlo job to its estimate of pi, refusing stale and foreign reports", async () => {
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 200_000 }, taskCount: 4 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("admitted");

    const first = await worker.worker.lease.mutate({ machineId, max: 2 });
    expect(first.leases).toHaveLength(2);
    expect((await consumer.jobs.get.query({ jobId })).tasks.leased).toBe(2);

    // Another producer cannot report on this machine's lease.
    const report0 = await run(first.leases[0]!);
    expect((await refusal(intruder.worker.report.mutate(report0))).code).toBe("not-your-machine");
    // A forged hash is refused.
    expect((await refusal(worker.worker.report.mutate({ ...report0, outputHash: "0".repeat(64) }))).code).toBe("hash-mismatch");

    expect(await worker.worker.report.mutate(report0)).toMatchObject({ accepted: true });
    // The same lease a second time is no longer current.
    expect((await refusal(worker.worker.report.mutate(report0))).code).toBe("stale-lease");
    // A lease that never existed.
    expect((await refusal(worker.worker.report.mutate({ ...report0, leaseId: randomUUID() }))).code).toBe("stale-lease");
    const beat = await worker.worker.heartbeat.mutate({ machineId, leaseIds: [first.leases[1]!.leaseId, report0.leaseId] });
    expect(beat.expiredLeaseIds).toEqual([report0.leaseId]);

    expect(await worker.worker.report.mutate(await run(first.leases[1]!))).toMatchObject({ accepted: true });
    const second = await worker.worker.lease.mutate({ machineId, max: 4 });
    expect(second.leases).toHaveLength(2);
    // Several results in one call, each answered on its own: a stale one among them is refused alone.
    const many = await worker.worker.reportMany.mutate({ reports: [...(await Promise.all(second.leases.map(run))), report0] });
    expect(many.answers.map((a) => a.accepted)).toEqual([true, true, false]);
    expect(many.answers[2]!.error).toMatchObject({ code: "CONFLICT", reason: { code: "stale-lease" } });
    expect((await worker.worker.lease.mutate({ machineId, max: 4 })).leases).toHaveLength(0);

    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(job.tasksDone).toBe(4);
    const result = job.result as { pi: number; total: number };
    expect(result.total).toBe(800_000);
    expect(Math.abs(result.pi - Math.PI)).toBeLessThan(0.02);

    // Exactly one accepted result per task, stored in PostgreSQL.
    const db = market.manager.services.db;
    expect(await db.result.count({ where: { lease: { task: { jobId } }, accepted: true } })).toBe(4);

    // Settlement at the posted price (not the benefit of 100): the quote, or the producers' pay
    // for four runs if that came to more; the producer was paid out of the escrow, the rest of the
    // escrow came back, and every account sums to zero.
    const paid = Number((await db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind: "producer" } } }))._sum.amountMicro!) / 1e6;
    const price = decision.outcome === "admitted" ? decision.price : NaN;
    expect(price).toBeLessThan(100);
    expect(job.charged).toBeCloseTo(Math.max(price, paid), 6);
    const statement = await consumer.ledger.statement.query();
    expect(statement.consumerBalance).toBeCloseTo(1000 - job.charged!, 6);
    const lines = statement.lines.filter((l) => l.jobId === jobId);
    const escrow = -lines.find((l) => l.kind === "escrow")!.amount;
    expect(lines.find((l) => l.kind === "settlement")!.amount).toBeCloseTo(escrow - job.charged!, 6);
    const payments = await db.ledgerEntry.count({ where: { jobId, kind: "payment" } });
    expect(payments).toBe(4);
    const sum = await db.ledgerAccount.aggregate({ _sum: { balanceMicro: true } });
    expect(sum._sum.balanceMicro).toBe(0n);
    // The market's profit is what it charged less what it paid the producer.
    const { marketBooks } = await import("../../apps/market-manager/src/ledger/statement.ts");
    expect((await marketBooks(market.manager.services.database.reads)).profit).toBeCloseTo(job.charged! - paid, 6);
  });

  it("frees the slots of a machine running a job that is cancelled: the next job's task leases there at once", async () => {
    const submit = (name: string, taskCount: number) =>
      consumer.jobs.submit.mutate({ name, source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount }, benefit: { kind: "constant", value: 10 } });
    // A machine holds up to twice its slots' leases (2 slots: 4): the cancelled job fills them all.
    const cancelled = await submit("cancelled", 4);
    const held = await worker.worker.lease.mutate({ machineId, max: 4 });
    expect(held.leases.map((l) => l.jobId)).toEqual(Array(4).fill(cancelled.jobId));
    await consumer.jobs.cancel.mutate({ jobId: cancelled.jobId });
    const next = await submit("next", 1);
    const leased = await worker.worker.lease.mutate({ machineId, max: 4 });
    expect(leased.leases.map((l) => l.jobId)).toEqual([next.jobId]);
    // Reported, so the machine is idle again for the tests after this one.
    expect(await worker.worker.report.mutate(await run(leased.leases[0]!))).toMatchObject({ accepted: true });
  });

  it("does not show a job to anyone but its owner", async () => {
    const { jobId } = await consumer.jobs.submit.mutate({
      name: "private",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: 1 },
      benefit: { kind: "constant", value: 10 },
    });
    const stranger = await market.signUp("stranger@example.test", ["consumer"]);
    expect((await refusal(stranger.jobs.get.query({ jobId }))).code).toBe("not-found");
  });

  it("refuses a machine claiming a thousand times the reference speed", async () => {
    const reason = await refusal(
      worker.worker.register.mutate({ name: "liar", kind: "opportunistic", slots: 1, speed: 1000, memoryPerSlotMb: 256, bandwidthBytesPerSecond: 1e6, pricePerSecond: 0, userAgent: "" }),
    );
    expect(reason).toMatchObject({ code: "invalid-input", message: expect.stringMatching(/speed: .*at least 0\.01 and at most 50/) });
    expect(await market.manager.services.db.machine.count({ where: { name: "liar" } })).toBe(0);
  });

  it("refuses worker calls without a valid token", async () => {
    const anonymous = market.tokenClient("cmk_not-a-real-token");
    expect((await refusal(anonymous.worker.lease.mutate({ machineId, max: 1 }))).code).toBe("trpc:UNAUTHORIZED");
  });
});
