import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { marketWithMachine, runLease } from "../support/worker.ts";
import { audit } from "../../apps/market-manager/bench/audit.ts";
import { expireLeases } from "../../apps/market-manager/src/resources/leases.ts";

// The benches' audit of the books (bench/audit.ts) against what the market really does with a
// task whose first run failed or whose lease ran out: a failed run nobody reproduced is not paid
// and the task runs again; a report arriving after its lease expired is still accepted when it is
// the task's first, its piece held for the job's lateness and settled with the job, and the run
// placed again is refused. The audit must count neither as lost, and must name what it found when
// a task is lost.

let market: TestMarket;
let consumer: Awaited<ReturnType<typeof marketWithMachine>>["consumer"];
let worker: Awaited<ReturnType<typeof marketWithMachine>>["worker"];
let machineId: string;

beforeAll(async () => {
  market = await startTestMarket();
  ({ consumer, worker, machineId } = await marketWithMachine(market));
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const submit = async (taskCount: number) => {
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name: "pi",
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount },
    benefit: { kind: "constant", value: 100 },
  });
  expect(decision.outcome).toBe("admitted");
  return jobId;
};
const leaseOne = async () => {
  const [lease] = (await worker.worker.lease.mutate({ machineId, max: 1 })).leases;
  expect(lease).toBeDefined();
  return lease!;
};

/** A one-task job whose lease expires while its run's report is still held back. */
async function reportHeldPastItsLease() {
  const jobId = await submit(1);
  const first = await leaseOne();
  const late = await runLease(worker, machineId, first);
  const live = market.manager.services.market;
  live.state.leases.get(first.leaseId)!.expiresAt = live.clock.now() - 1;
  expect(await expireLeases(live)).toBe(1);
  return { jobId, first, late };
}

describe("the bench's audit of the books", () => {
  it("counts a task whose failed run was not paid before its accepted run as whole, with the one payment", async () => {
    const jobId = await submit(1);
    // The run fails as the Node worker reports a module it could not fetch (a busy market).
    const failed = await leaseOne();
    const answer = await worker.worker.report.mutate({
      ...(await runLease(worker, machineId, failed)),
      exitCode: -1,
      elapsedMs: 40,
      error: { code: "invalid-module", message: "the module could not be fetched: 503" },
    });
    expect(answer.accepted).toBe(false);
    const again = await leaseOne();
    expect(again.taskId).toBe(failed.taskId);
    expect((await worker.worker.report.mutate(await runLease(worker, machineId, again))).accepted).toBe(true);
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");

    const payments = await db().ledgerEntry.findMany({ where: { jobId, kind: "payment" }, orderBy: { createdAt: "asc" } });
    expect(payments.map((p) => (p.memo as { of: string }).of)).toEqual(["result"]);
    const books = await audit(db(), [jobId]);
    expect(books).toMatchObject({ tasks: 1, tasksLost: 0, jobsUnsettled: 0, lost: 0 });
    expect(books.lostTasks).toBeUndefined();
  });

  it("counts a task whose late report was accepted after its lease expired, its piece held, as whole", async () => {
    // The lease runs out while its report waits: the task is placed again and leased anew.
    const { jobId, first, late } = await reportHeldPastItsLease();
    const second = await leaseOne();
    expect(second.taskId).toBe(first.taskId);
    const again = await runLease(worker, machineId, second);
    // The late result is still the task's first: accepted, and the run placed again is refused.
    expect((await worker.worker.report.mutate(late)).accepted).toBe(true);
    await expect(worker.worker.report.mutate(again)).rejects.toThrow(/not current/);
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");

    expect(await db().result.count({ where: { lease: { task: { jobId } } } })).toBe(1);
    expect((await db().result.findFirstOrThrow({ where: { lease: { task: { jobId } } } })).heldMicro).toBeGreaterThan(0n);
    expect(await db().ledgerEntry.count({ where: { jobId, kind: "payment" } })).toBe(0);
    expect(await audit(db(), [jobId])).toMatchObject({ tasks: 1, tasksLost: 0, jobsUnsettled: 0, lost: 0 });
  });

  it("names what a lost task's rows say: its status, results and payments", async () => {
    const jobId = await submit(2);
    const done = await leaseOne();
    expect((await worker.worker.report.mutate(await runLease(worker, machineId, done))).accepted).toBe(true);
    const books = await audit(db(), [jobId]);
    // The other task never ran: it is not done, has no accepted result and was paid nothing.
    expect(books).toMatchObject({ tasks: 2, tasksLost: 1 });
    expect(books.lostTasks).toHaveLength(1);
    expect(books.lostTasks![0]).toMatchObject({ jobId, acceptedResultId: null, results: [], payments: [] });
    expect(books.lostTasks![0]!.status).not.toBe("done");
    // The finished task's payment says it paid one accepted result, and its result what it was paid.
    const whole = await db().ledgerEntry.findFirstOrThrow({ where: { jobId, kind: "payment" }, include: { postings: true } });
    expect(whole.memo).toMatchObject({ of: "result", tasks: 1, machineIds: [machineId] });
    const accepted = await db().result.findUniqueOrThrow({ where: { id: (await db().task.findUniqueOrThrow({ where: { id: done.taskId } })).acceptedResultId! } });
    expect(accepted.paidMicro).toBeGreaterThan(0n);
    expect(whole.postings.map((p) => p.amountMicro).sort()).toEqual([-accepted.paidMicro!, accepted.paidMicro!].sort());
    expect(books.jobsMispaid).toBe(0);
    // A job whose results say other than its payment entries paid is counted too.
    await db().result.update({ where: { id: accepted.id }, data: { paidMicro: accepted.paidMicro! + 1n } });
    expect(await audit(db(), [jobId])).toMatchObject({ jobsMispaid: 1 });
    await db().result.update({ where: { id: accepted.id }, data: { paidMicro: accepted.paidMicro } });
  });

  it("still accepts a late report as the task's first after the market restarted", async () => {
    // What earlier tests left queued runs first, so the next lease is this job's.
    for (let leases = await worker.worker.lease.mutate({ machineId, max: 2 }); leases.leases.length; leases = await worker.worker.lease.mutate({ machineId, max: 2 })) {
      for (const l of leases.leases) await worker.worker.report.mutate(await runLease(worker, machineId, l));
    }
    const { jobId, late } = await reportHeldPastItsLease();
    // The manager restarts while the report is on its way: the expired lease is read back with the job.
    await market.restart();
    expect((await worker.worker.report.mutate(late)).accepted).toBe(true);
    await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status).toBe("completed");
    expect((await db().result.findFirstOrThrow({ where: { lease: { task: { jobId } } } })).heldMicro).toBeGreaterThan(0n);
    expect(await audit(db(), [jobId])).toMatchObject({ tasks: 1, tasksLost: 0, jobsUnsettled: 0, lost: 0 });
  });
});
