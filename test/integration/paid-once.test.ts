import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { groupPayment } from "../../apps/market-manager/src/ledger/entries.ts";
import { ledgerParams } from "../../apps/market-manager/src/db/sql/ledger-rows.ts";
import { plainReports } from "../../apps/market-manager/src/db/sql/plain-reports.ts";
import { runStatement } from "../../apps/market-manager/src/db/sql/statement.ts";
import { viaPrisma } from "../../apps/market-manager/src/db/sql/runners.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances } from "../support/books.ts";

// Paid once. A group of plain reports pays each producer one entry per job (the sum of its
// results' pieces), so no ledger row is a task's own: what keeps a task from being paid twice is
// its own row, moved from leased to done by the statement that pays it. Each attack reports a run
// the market has accepted again, the way a producer (or a manager whose memory is wrong) could,
// and checks that the producer's account and the task's results hold one payment.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
let consumer: Client;
let seller: { worker: Worker; ownerId: string; machineId: string };

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("once-buyer@example.test", ["consumer"]);
  const { producer, worker } = await market.signUpProducer("once-seller@example.test");
  const ownerId = (await producer.account.me.query())!.id;
  seller = { worker, ownerId, machineId: "" };
  seller.machineId = await register();
}, 120_000);
afterAll(() => market?.stop());

const db = () => market.manager.services.db;

async function register() {
  const { machineId } = await seller.worker.worker.register.mutate({
    name: "once",
    kind: "opportunistic",
    slots: 8,
    speed: 1,
    memoryPerSlotMb: 512,
    bandwidthBytesPerSecond: 1e7,
    pricePerSecond: 0.004,
    userAgent: "once",
  });
  return machineId;
}

function report(l: { leaseId: string; taskId: string }) {
  const stdout = Buffer.from(`out ${l.taskId}`);
  return { machineId: seller.machineId, leaseId: l.leaseId, exitCode: 0, elapsedMs: 5, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex") };
}

async function submit(tasks: number) {
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name: "once",
    source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: tasks }, () => ({ args: [], stdin: "" })), workPerTask: 0.02, memoryMbPerTask: 16 },
    benefit: { kind: "constant", value: 50 },
  });
  expect(decision.outcome).toBe("admitted");
  return jobId;
}

async function lease(jobId: string, n: number) {
  const { leases } = await seller.worker.worker.lease.mutate({ machineId: seller.machineId, max: n });
  const mine = leases.filter((l) => l.jobId === jobId);
  expect(mine).toHaveLength(n);
  return mine;
}

/** What the job paid the producer (its payment entries' credits) and what each task's results say they were paid. */
async function paid(jobId: string) {
  const entries = await db().ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind: "producer", userId: seller.ownerId } } });
  const results = await db().result.findMany({ where: { lease: { task: { jobId } } }, select: { lease: { select: { taskId: true } }, accepted: true, paidMicro: true } }).then((rows) => rows.map(({ lease, ...r }) => ({ ...r, ...lease })));
  return { toProducer: entries._sum.amountMicro ?? 0n, results };
}

/** Each leased task has one accepted result, paid its lease's piece rate, and the producer got their sum once. */
async function expectPaidOnce(jobId: string, leased: { leaseId: string; taskId: string }[]) {
  const rates = await db().lease.findMany({ where: { id: { in: leased.map((l) => l.leaseId) } }, select: { taskId: true, pieceRateMicro: true } });
  const rate = new Map(rates.map((r) => [r.taskId, r.pieceRateMicro]));
  const { toProducer, results } = await paid(jobId);
  for (const l of leased) {
    const of = results.filter((r) => r.taskId === l.taskId);
    expect(of).toEqual([{ taskId: l.taskId, accepted: true, paidMicro: rate.get(l.taskId) }]);
    expect(rate.get(l.taskId)!).toBeGreaterThan(0n);
  }
  expect(toProducer).toBe([...rate.values()].reduce((s, x) => s + x, 0n));
  await expectLedgerBalances(db());
}

describe("a run reported again", () => {
  it("is paid once when the same report comes twice in one call", async () => {
    const jobId = await submit(3);
    const leased = await lease(jobId, 3);
    const reports = leased.map(report);
    const { answers } = await seller.worker.worker.reportMany.mutate({ reports: [...reports, reports[0]!, reports[1]!] });
    expect(answers.slice(0, 3)).toEqual([{ accepted: true }, { accepted: true }, { accepted: true }]);
    expect(answers.slice(3).every((a) => !("accepted" in a && a.accepted))).toBe(true);
    await expectPaidOnce(jobId, leased);
  });

  it("is paid once when it comes again in a later call", async () => {
    const jobId = await submit(2);
    const leased = await lease(jobId, 2);
    const reports = leased.map(report);
    await seller.worker.worker.reportMany.mutate({ reports });
    const again = await seller.worker.worker.reportMany.mutate({ reports });
    expect(again.answers.every((a) => !("accepted" in a && a.accepted))).toBe(true);
    await expectPaidOnce(jobId, leased);
  });

  it("is paid once when it comes again after the manager restarted", async () => {
    const jobId = await submit(2);
    const leased = await lease(jobId, 2);
    const reports = leased.map(report);
    await seller.worker.worker.reportMany.mutate({ reports });
    await market.restart();
    const again = await seller.worker.worker.reportMany.mutate({ reports });
    expect(again.answers.every((a) => !("accepted" in a && a.accepted))).toBe(true);
    await expectPaidOnce(jobId, leased);
  });

  it("is refused by the database when memory would pay a done task again on a fresh lease", async () => {
    const jobId = await submit(3);
    const [first] = await lease(jobId, 1);
    await seller.worker.worker.reportMany.mutate({ reports: [report(first!)] });
    const before = await paid(jobId);
    // As if a manager believed the task leased again: an active lease of the done task on the same machine.
    const leaseId = randomUUID();
    await db().$executeRawUnsafe(
      `INSERT INTO "Lease" (id, "taskId", "machineId", status, "expiresAt", "pieceRateMicro") VALUES ($1::uuid, $2, $3, 'active', now() + interval '1 hour', 7)`,
      leaseId,
      first!.taskId,
      seller.machineId,
    );
    const stdout = Buffer.from("again");
    const refused = await runStatement(viaPrisma(db()), plainReports, {
      taskIds: [first!.taskId],
      leaseIds: [leaseId],
      machineIds: [seller.machineId],
      exitCodes: [0],
      stdouts: [stdout.toString("base64")],
      stderrs: [""],
      hashes: [createHash("sha256").update(stdout).digest("hex")],
      elapsedMs: [5],
      paid: ["7"],
      at: [Date.now()],
      agreedOwners: [1],
      jobIds: [jobId],
      jobDone: [1],
      jobWork: [null],
      jobSamples: ["[]"],
      settledJobs: [],
      settledCharged: [],
      settledAt: [],
      settledResults: [],
      speedMachines: [],
      speeds: [],
      ...ledgerParams([groupPayment({ jobId, producerId: seller.ownerId, pieces: [{ machineId: seller.machineId, amount: 7n }] })]),
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).not.toBeNull();
    expect(String((refused as Error).message)).toMatch(/lease-not-found|MK001/);
    // Nothing of it was written: the producer holds what it held, the task its one result.
    expect(await paid(jobId)).toEqual(before);
    expect((await db().lease.findUniqueOrThrow({ where: { id: leaseId } })).status).toBe("active");
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).tasksDone).toBe(1);
    await db().lease.update({ where: { id: leaseId }, data: { status: "expired" } });
    await expectLedgerBalances(db());
  });
});
