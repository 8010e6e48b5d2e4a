import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { expectLedgerBalances, expectMarketInvariants } from "../support/books.ts";

// A job's last result usually settles the job in the very statement that records it (the group
// commit's, tasks/report-rows.ts); a result the statement cannot take (one that contradicts a
// failure reported before it, say) is written, and the job settled, by a transaction. The
// consumer, the producer and the market must come out the same either way, and a group holding
// the last results of several jobs must settle each of them once.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
let consumer: Client;
let worker: Worker;

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  ({ worker } = await market.signUpProducer("seller@example.test"));
});
afterAll(() => market?.stop());

const db = () => market.manager.services.db;
const machine = (name: string, slots = 2) => ({ name, kind: "opportunistic" as const, slots, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 2, userAgent: "test" });
const job = (name: string, tasks: number) => ({
  name,
  source: { kind: "upload" as const, moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: tasks }, () => ({ args: [], stdin: "" })), workPerTask: 0.01, memoryMbPerTask: 16 },
  benefit: { kind: "constant" as const, value: 40 },
});
const output = (text: string) => ({ exitCode: 0, stdout: Buffer.from(text).toString("base64"), stderr: "", outputHash: createHash("sha256").update(text).digest("hex") });

/** Runs every task of a new job on `machineId`, reporting each as done in `elapsedMs`, and returns the job's id. */
async function runJob(name: string, machineId: string, tasks: number, elapsedMs: number) {
  const { jobId, decision } = await consumer.jobs.submit.mutate(job(name, tasks));
  expect(decision.outcome).toBe("admitted");
  const { leases } = await worker.worker.lease.mutate({ machineId, max: tasks });
  expect(leases.map((l) => l.jobId)).toEqual(Array(tasks).fill(jobId));
  const { answers } = await worker.worker.reportMany.mutate({ reports: leases.map((l) => ({ machineId, leaseId: l.leaseId, elapsedMs, ...output(`task ${l.taskId}`) })) });
  expect(answers.every((a) => a.accepted)).toBe(true);
  return jobId;
}

/** What a job's settlement moved, by account kind, and what it says it charged and paid. */
async function settlementOf(jobId: string) {
  const entry = await db().ledgerEntry.findUniqueOrThrow({ where: { uniqueKey: `settle:${jobId}` }, include: { postings: { include: { account: true } } } });
  const memo = entry.memo as Record<string, unknown>;
  const moved = Object.fromEntries(entry.postings.map((p) => [p.account.kind, p.amountMicro]));
  const row = await db().job.findUniqueOrThrow({ where: { id: jobId } });
  const pieces = await db().ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { jobId, kind: "payment" }, account: { kind: "producer" } } });
  return { charge: memo.chargeMicro, relief: [memo.reliefFromLateMicro, memo.reliefFromMarketMicro], paid: pieces._sum.amountMicro ?? 0n, terms: memo.terms, moved, status: row.status, charged: row.chargedMicro, result: row.result };
}

describe("a job's settlement", () => {
  it("is the same whether the group's statement or a transaction writes it", async () => {
    const { machineId: fresh } = await worker.worker.register.mutate(machine("fresh"));
    const inStatement = await runJob("in the statement", fresh, 3, 4);
    await worker.worker.depart.mutate({ machineId: fresh });

    // A result that contradicts a failure reported before it establishes a fact about its owner's
    // standing (an unconfirmed failure): it is written, and its job settled, by a transaction.
    const { machineId: doubted } = await worker.worker.register.mutate(machine("doubted"));
    const { jobId: inTransaction, decision } = await consumer.jobs.submit.mutate(job("in a transaction", 3));
    expect(decision.outcome).toBe("admitted");
    const { leases } = await worker.worker.lease.mutate({ machineId: doubted, max: 3 });
    expect(leases).toHaveLength(3);
    for (const l of leases) await worker.worker.report.mutate({ machineId: doubted, leaseId: l.leaseId, elapsedMs: 4, ...output(""), exitCode: -1, error: { code: "trap", message: "unreachable" } });
    // No other owner is here to run them: the same machine runs them again, and they succeed.
    const { leases: again } = await worker.worker.lease.mutate({ machineId: doubted, max: 3 });
    expect(again).toHaveLength(3);
    for (const l of again) await worker.worker.report.mutate({ machineId: doubted, leaseId: l.leaseId, elapsedMs: 4, ...output(`task ${l.taskId}`) });
    const seller = await db().machine.findUniqueOrThrow({ where: { id: doubted }, select: { owner: { select: { standing: true } } } });
    expect(seller.owner.standing?.unconfirmedFailures).toBe(3);
    await worker.worker.depart.mutate({ machineId: doubted });

    const a = await settlementOf(inStatement);
    const b = await settlementOf(inTransaction);
    expect(a.status).toBe("completed");
    expect(a.paid).toBeGreaterThan(0n);
    expect(a.charged).toBeGreaterThan(0n);
    expect(a.moved.escrow).toBeLessThan(0n);
    expect(a).toEqual(b);
    // The consumer sees both jobs charged the same, with every output.
    const [pa, pb] = await Promise.all([consumer.jobs.get.query({ jobId: inStatement }), consumer.jobs.get.query({ jobId: inTransaction })]);
    expect({ status: pa.status, charged: pa.charged }).toEqual({ status: pb.status, charged: pb.charged });
    expect((await consumer.jobs.outputs.query({ jobId: inStatement })).map((o) => o.stdoutText)).toHaveLength(3);
    await expectMarketInvariants(db(), [inStatement, inTransaction]);
  });

  it("settles each of several jobs whose last results arrive in one call, once", async () => {
    const { machineId } = await worker.worker.register.mutate(machine("wide", 8));
    const jobIds: string[] = [];
    for (let i = 0; i < 4; i++) jobIds.push((await consumer.jobs.submit.mutate(job(`batch ${i}`, 2))).jobId);
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 8 });
    expect(new Set(leases.map((l) => l.jobId))).toEqual(new Set(jobIds));
    const before = (await consumer.ledger.statement.query()).consumerBalance;
    const { answers } = await worker.worker.reportMany.mutate({ reports: leases.map((l) => ({ machineId, leaseId: l.leaseId, elapsedMs: 3, ...output(`x ${l.taskId}`) })) });
    expect(answers.every((a) => a.accepted)).toBe(true);
    for (const jobId of jobIds) expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");
    await expectMarketInvariants(db(), jobIds);
    // Each job's escrow came back less what it was charged.
    const charged = (await Promise.all(jobIds.map((jobId) => settlementOf(jobId)))).reduce((s, x) => s + (x.charged ?? 0n), 0n);
    const after = (await consumer.ledger.statement.query()).consumerBalance;
    const escrowed = (await db().job.findMany({ where: { id: { in: jobIds } } })).reduce((s, j) => s + j.escrowMicro, 0n);
    expect(Math.round((after - before) * 1e6)).toBe(Number(escrowed - charged));
    await worker.worker.depart.mutate({ machineId });
    await expectLedgerBalances(db());
  });
});
