import { randomUUID } from "node:crypto";
import type { Market } from "../market/market.ts";
import type { Tx } from "../ledger/ledger.ts";
import { refinedWorkOf } from "../resources/refine.ts";
import { quoteRun, REPUTATION_REWARD, storedMs, type Completion, type CompletionStep } from "./results.ts";

interface PlainRow {
  c: Completion;
  now: number;
  resultId: string;
  agreedOwners: number;
  amount: bigint;
  paidSeconds: number;
  /** Opportunistic machines are paid per run, with a ledger entry; dedicated ones by their contract. */
  entry: boolean;
}

/**
 * The rows of a group commit's plain reports (results.ts `plain`: a successful run that decides a
 * task without copies and leaves its job running, paid within its cap and its escrow, on a
 * machine whose reputation is already at the top), written for the whole group in nine
 * statements instead of about a dozen per report. They are the rows completeTask writes one by
 * one: the result (accepted, with what it was paid), the lease completed, the payment's ledger
 * entry under its unique key `pay:<result>`, the escrow debited only down to its floor in the same
 * statement, the producer credited, the postings, the task done, the job's done count and its
 * refined work per task. Any other report is written alone by completeTask's own `write`, after
 * `flush` has written the plain rows before it, so it sees the escrow and the job as they are.
 */
export class PlainRows {
  private rows: PlainRow[] = [];
  /** The escrow of each job of the group as this transaction has it, the pending rows' payments taken off. */
  private escrow: Map<string, bigint> | null = null;
  /** The job's refined work per task after the pending rows, when a run refined it. */
  private work = new Map<string, number>();

  constructor(
    private market: Market,
    private tx: Tx,
    private jobIds: string[],
  ) {}

  /** Takes the report as a plain row and returns its result's id, or null: the caller writes it alone (after `flush`). */
  async take(c: Completion, step: CompletionStep): Promise<string | null> {
    const plain = step.plain;
    const m = c.machine;
    if (!plain || Math.min(1, m.reputation + REPUTATION_REWARD) !== m.reputation) return null;
    this.escrow ??= await this.readEscrows();
    const held = this.escrow.get(plain.job.id) ?? 0n;
    const { p, amount } = quoteRun(this.market, plain.job, m, storedMs(c.report.elapsedMs), held);
    if (p.implausible || p.escrowExhausted) return null;
    const entry = m.kind === "opportunistic";
    if (entry) this.escrow.set(plain.job.id, held - amount);
    // As completeTask's refine: memory ahead of the commit, the row written with the group.
    const work = refinedWorkOf(this.market, m, plain.job, c.report.elapsedMs / 1000);
    if (work !== null) this.work.set(plain.job.id, (plain.job.workPerTask = work));
    const resultId = randomUUID();
    this.rows.push({ c, now: plain.now, resultId, agreedOwners: plain.agreedOwners, amount, paidSeconds: p.paidSeconds, entry });
    return resultId;
  }

  private async readEscrows() {
    const accounts = await this.tx.$queryRaw<{ jobId: string; balance: string }[]>`
      SELECT "jobId", "balanceMicro"::text AS balance FROM "LedgerAccount" WHERE "jobId" = ANY(${this.jobIds}::text[])`;
    return new Map(accounts.map((a) => [a.jobId, BigInt(a.balance)]));
  }

  /** Writes the pending rows. A report written alone next may move escrows: they are read again after it. */
  async flush() {
    const rows = this.rows;
    const work = this.work;
    this.rows = [];
    this.work = new Map();
    this.escrow = null;
    if (!rows.length) return;
    const tx = this.tx;
    // Raw multi-row statements: Prisma's per-row work showed in the profile. Outputs go as
    // canonical base64 text and become bytes in SQL.
    await tx.$executeRaw`
      INSERT INTO "Result" (id, "taskId", "leaseId", "machineId", "exitCode", stdout, stderr, "outputHash", "elapsedMs", accepted, "paidMicro", implausible, "createdAt")
      SELECT v.id, v.task, v.lease, v.machine, v.exit, decode(v.out, 'base64'), decode(v.err, 'base64'), v.hash, v.ms, true, v.paid, false, timestamp 'epoch' + v.at * interval '1 millisecond'
      FROM unnest(
        ${rows.map((r) => r.resultId)}::text[], ${rows.map((r) => r.c.task.id)}::text[], ${rows.map((r) => r.c.lease.id)}::text[], ${rows.map((r) => r.c.machine.id)}::text[],
        ${rows.map((r) => r.c.report.exitCode)}::int[], ${rows.map((r) => r.c.stdout.toString("base64"))}::text[], ${rows.map((r) => r.c.stderr.toString("base64"))}::text[],
        ${rows.map((r) => r.c.hash)}::text[], ${rows.map((r) => storedMs(r.c.report.elapsedMs))}::int[], ${rows.map((r) => String(r.amount))}::bigint[], ${rows.map((r) => r.now)}::float8[]
      ) AS v(id, task, lease, machine, exit, out, err, hash, ms, paid, at)`;
    // Times go as epoch milliseconds and become the columns' UTC timestamps in SQL (as liveness.ts).
    await tx.$executeRaw`
      UPDATE "Lease" l SET status = 'completed'::"LeaseStatus", "endedAt" = timestamp 'epoch' + v.ms * interval '1 millisecond'
      FROM unnest(${rows.map((r) => r.c.lease.id)}::text[], ${rows.map((r) => r.now)}::float8[]) AS v(id, ms)
      WHERE l.id = v.id`;
    await this.pay(rows.filter((r) => r.entry));
    await tx.$executeRaw`
      UPDATE "Task" t SET status = 'done'::"TaskStatus", "completedAt" = timestamp 'epoch' + v.ms * interval '1 millisecond',
        "acceptedResultId" = v.result, "agreedOwners" = v.owners
      FROM unnest(${rows.map((r) => r.c.task.id)}::text[], ${rows.map((r) => r.resultId)}::text[], ${rows.map((r) => r.agreedOwners)}::int[], ${rows.map((r) => r.now)}::float8[]) AS v(id, result, owners, ms)
      WHERE t.id = v.id`;
    const done = new Map<string, number>();
    for (const r of rows) done.set(r.c.task.jobId, (done.get(r.c.task.jobId) ?? 0) + 1);
    const jobIds = [...done.keys()];
    await tx.$executeRaw`
      UPDATE "Job" j SET "tasksDone" = j."tasksDone" + v.n, "workPerTask" = COALESCE(v.work, j."workPerTask")
      FROM unnest(${jobIds}::text[], ${jobIds.map((id) => done.get(id)!)}::int[], ${jobIds.map((id) => work.get(id) ?? null)}::float8[]) AS v(id, n, work)
      WHERE j.id = v.id`;
  }

  /** The payments' entries, each escrow debited once and each producer credited once for the group, and their postings. */
  private async pay(rows: PlainRow[]) {
    if (!rows.length) return;
    const tx = this.tx;
    const entries = rows.map((r) => ({ id: randomUUID(), r }));
    await tx.$executeRaw`
      INSERT INTO "LedgerEntry" (id, kind, "uniqueKey", "jobId", "taskId", memo)
      SELECT v.id, 'payment', v.key, v.job, v.task, v.memo::jsonb
      FROM unnest(
        ${entries.map((e) => e.id)}::text[], ${entries.map(({ r }) => `pay:${r.resultId}`)}::text[], ${entries.map(({ r }) => r.c.task.jobId)}::text[], ${entries.map(({ r }) => r.c.task.id)}::text[],
        ${entries.map(({ r }) => JSON.stringify({ machineId: r.c.machine.id, seconds: r.paidSeconds, reportedSeconds: storedMs(r.c.report.elapsedMs) / 1000, failed: false }))}::text[]
      ) AS v(id, key, job, task, memo)`;
    // Zero amounts post nothing (ledger.ts `post`): the entry alone records the run.
    const moving = entries.filter(({ r }) => r.amount !== 0n);
    if (!moving.length) return;
    const debits = new Map<string, bigint>();
    const credits = new Map<string, bigint>();
    for (const { r } of moving) {
      debits.set(r.c.task.jobId, (debits.get(r.c.task.jobId) ?? 0n) + r.amount);
      credits.set(r.c.machine.ownerId, (credits.get(r.c.machine.ownerId) ?? 0n) + r.amount);
    }
    // Conditional on the floor in the same statement, as every debit: an escrow that cannot cover
    // its payments fails the group, whose reports are then written one by one and refused there.
    const escrows = await tx.$queryRaw<{ id: string; jobId: string }[]>`
      UPDATE "LedgerAccount" a SET "balanceMicro" = a."balanceMicro" - v.amount
      FROM unnest(${[...debits.keys()]}::text[], ${[...debits.values()].map(String)}::bigint[]) AS v(job, amount)
      WHERE a."jobId" = v.job AND a."balanceMicro" - v.amount >= a."minBalanceMicro"
      RETURNING a.id, a."jobId"`;
    if (escrows.length !== debits.size) throw new Error(`${debits.size - escrows.length} escrow(s) could not cover the group's payments`);
    const producers = await tx.$queryRaw<{ id: string; userId: string }[]>`
      INSERT INTO "LedgerAccount" (id, kind, "userId", "balanceMicro")
      SELECT v.id, 'producer'::"AccountKind", v.owner, v.amount
      FROM unnest(${[...credits.keys()].map(() => randomUUID())}::text[], ${[...credits.keys()]}::text[], ${[...credits.values()].map(String)}::bigint[]) AS v(id, owner, amount)
      ON CONFLICT (kind, "userId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + EXCLUDED."balanceMicro"
      RETURNING id, "userId"`;
    const escrowOf = new Map(escrows.map((a) => [a.jobId, a.id]));
    const producerOf = new Map(producers.map((a) => [a.userId, a.id]));
    const postings = moving.flatMap(({ id, r }) => [
      { entryId: id, accountId: escrowOf.get(r.c.task.jobId)!, amount: -r.amount },
      { entryId: id, accountId: producerOf.get(r.c.machine.ownerId)!, amount: r.amount },
    ]);
    await tx.$executeRaw`
      INSERT INTO "LedgerPosting" (id, "entryId", "accountId", "amountMicro")
      SELECT * FROM unnest(${postings.map(() => randomUUID())}::text[], ${postings.map((p) => p.entryId)}::text[], ${postings.map((p) => p.accountId)}::text[], ${postings.map((p) => String(p.amount))}::bigint[])`;
  }
}
