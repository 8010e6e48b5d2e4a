// What a fault must never break, read straight from PostgreSQL after the market settled down:
// every admitted job completed with one accepted result per task, every accepted result paid
// exactly once, every job settled exactly once, and a ledger that balances.
import { expect } from "vitest";
import { createDb, type Db } from "../../apps/market-manager/src/db/client.ts";

export async function withDb<T>(url: string, use: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(url);
  try {
    return await use(db);
  } finally {
    await db.$disconnect();
  }
}

export async function expectMarketInvariants(db: Db, jobIds: string[]) {
  const jobs = await db.job.findMany({ where: { id: { in: jobIds } }, include: { tasks: true } });
  expect(jobs).toHaveLength(jobIds.length);
  let taskCount = 0;
  for (const job of jobs) {
    expect({ job: job.name, status: job.status }).toEqual({ job: job.name, status: "completed" });
    expect(job.tasksDone).toBe(job.taskCount);
    expect(job.tasks).toHaveLength(job.taskCount);
    taskCount += job.taskCount;
  }
  const tasks = jobs.flatMap((j) => j.tasks);
  for (const task of tasks) {
    expect(task.status).toBe("done");
    expect(task.acceptedResultId).not.toBeNull();
  }

  // No result lost, none counted twice: exactly one accepted result per task, the one it names.
  // A result's task and machine are its lease's.
  const accepted = await db.result.findMany({ where: { lease: { task: { jobId: { in: jobIds } } }, accepted: true }, include: { lease: { select: { taskId: true, machineId: true } } } }).then((rows) => rows.map(({ lease, ...r }) => ({ ...r, ...lease })));
  expect(accepted).toHaveLength(taskCount);
  expect(new Set(accepted.map((r) => r.taskId)).size).toBe(taskCount);
  const acceptedIds = new Set(accepted.map((r) => r.id));
  for (const task of tasks) expect(acceptedIds.has(task.acceptedResultId!)).toBe(true);

  // Nothing paid twice: each accepted result says what it was paid, no other run was paid, a run
  // written alone has at most its one payment entry (pay:<result>), and what each job's payments
  // credited producers (a group's runs share one entry per job and producer) is what its
  // results were paid.
  for (const r of accepted) expect({ result: r.id, paid: r.paidMicro !== null }).toEqual({ result: r.id, paid: true });
  expect(await db.result.count({ where: { lease: { task: { jobId: { in: jobIds } } }, accepted: false, paidMicro: { not: null } } })).toBe(0);
  const payments = await db.ledgerEntry.findMany({ where: { jobId: { in: jobIds }, kind: "payment" }, include: { postings: { include: { account: true } } } });
  const ownKeys = payments.filter((p) => p.taskId !== null).map((p) => p.uniqueKey);
  expect(new Set(ownKeys).size).toBe(ownKeys.length);
  const acceptedKeys = new Set(accepted.map((r) => `pay:${r.id}`));
  for (const key of ownKeys) expect(acceptedKeys.has(key)).toBe(true);
  const taskJob = new Map(tasks.map((t) => [t.id, t.jobId]));
  for (const jobId of jobIds) {
    const credited = payments.filter((p) => p.jobId === jobId).flatMap((p) => p.postings.filter((x) => x.account.kind === "producer")).reduce((s, x) => s + x.amountMicro, 0n);
    const owed = accepted.filter((r) => taskJob.get(r.taskId) === jobId).reduce((s, r) => s + r.paidMicro!, 0n);
    expect({ jobId, credited }).toEqual({ jobId, credited: owed });
  }

  // Each job settled exactly once, and its escrow is empty afterwards.
  const settlements = await db.ledgerEntry.groupBy({ by: ["jobId"], where: { jobId: { in: jobIds }, kind: "settlement" }, _count: { _all: true } });
  expect(settlements).toHaveLength(jobIds.length);
  for (const s of settlements) expect(s._count._all).toBe(1);
  const escrows = await db.ledgerAccount.findMany({ where: { kind: "escrow", jobId: { in: jobIds } } });
  expect(escrows).toHaveLength(jobIds.length);
  for (const e of escrows) expect(e.balanceMicro).toBe(0n);

  await expectLedgerBalances(db);
  return { taskCount, accepted, payments };
}

/** Double entry holds: every entry sums to zero, balances are their postings, only the market owes. */
export async function expectLedgerBalances(db: Db) {
  const accounts = await db.ledgerAccount.findMany();
  expect(accounts.reduce((s, a) => s + a.balanceMicro, 0n)).toBe(0n);
  for (const a of accounts) if (a.kind !== "market") expect({ account: a.kind, id: a.id, negative: a.balanceMicro < 0n }).toMatchObject({ negative: false });
  const byEntry = await db.ledgerPosting.groupBy({ by: ["entryId"], _sum: { amountMicro: true } });
  for (const e of byEntry) expect(e._sum.amountMicro).toBe(0n);
  const byAccount = await db.ledgerPosting.groupBy({ by: ["accountId"], _sum: { amountMicro: true } });
  const posted = new Map(byAccount.map((g) => [g.accountId, g._sum.amountMicro ?? 0n]));
  for (const a of accounts) expect(posted.get(a.id) ?? 0n).toBe(a.balanceMicro);
}

/** What the market's own account holds (micro-credits). */
export const marketMicro = async (db: Db) => (await db.ledgerAccount.findFirstOrThrow({ where: { kind: "market" } })).balanceMicro;
