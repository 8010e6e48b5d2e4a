import type { Market } from "../market/market.ts";
import type { Tx } from "../ledger/ledger.ts";
import { refinedWorkOf } from "../resources/refine.ts";
import { completedTerms, quoteRun, REPUTATION_REWARD, storedMs, type Completion, type CompletionStep } from "./results.ts";
import { completedEntry, paidForJobSql } from "../ledger/settlement.ts";
import { MARKET_OWNER } from "../ledger/ledger.ts";
import { countedOutputs } from "./examples.ts";
import { rowId } from "../db/row-id.ts";

export interface PlainRow {
  c: Completion;
  now: number;
  resultId: string;
  agreedOwners: number;
  amount: bigint;
  paidSeconds: number;
  /** Opportunistic machines are paid per run, with a ledger entry; dedicated ones by their contract. */
  entry: boolean;
  /** The run refined its job's work per task (in memory already). */
  refined: boolean;
  /** The job's settlement, when this run decides its last task (results.ts `plain.settles`). */
  settle: PlainSettlement | null;
}

/** A completed job's settlement as a group's statement writes it (ledger/settlement.ts settleCompleted's entry). */
export interface PlainSettlement {
  consumerId: string;
  /** What the market keeps (completedEntry); the consumer gets the escrow's rest, which the statement reads. */
  toMarket: bigint;
  charged: bigint;
  /** What the job's producers were paid in all, this run included, as memory counts it. */
  paidTotal: bigint;
  memo: string;
  result: string;
}

/** Runs one statement: through a transaction of Prisma's, or straight through the pool (`pg`). */
export type RunStatement = (name: string, text: string, values: unknown[]) => Promise<unknown>;

/**
 * A report as a plain row, or null when it is not one (results.ts `plain`, a machine whose
 * reputation would still rise, a run past its pay cap, an escrow holding `escrow` that cannot
 * cover it, or a settlement the market would pay into). Its job's refined work moves in memory
 * now, as completeTask's refine: the row carries it to the database with the group. The caller
 * counts the row (step.count with `paid`) before taking the next one.
 */
export function plainRow(market: Market, c: Completion, step: CompletionStep, escrow: bigint): PlainRow | null {
  const plain = step.plain;
  const m = c.machine;
  if (!plain || Math.min(1, m.reputation + REPUTATION_REWARD) !== m.reputation) return null;
  const { p, amount } = quoteRun(market, plain.job, m, storedMs(c.report.elapsedMs), escrow);
  if (p.implausible || p.escrowExhausted) return null;
  const entry = m.kind === "opportunistic";
  const work = refinedWorkOf(market, m, plain.job, c.report.elapsedMs / 1000);
  const before = plain.job.workPerTask;
  if (work !== null) plain.job.workPerTask = work;
  let settle: PlainSettlement | null = null;
  if (plain.settles) {
    // Settled as finishJob settles, once the run refined the job's work per task: the engine
    // judges whose lateness it was by it.
    const paidTotal = plain.job.paidMicro! + (entry ? amount : 0n);
    const { toMarket, charged, memo } = completedEntry(completedTerms(market, plain.job, plain.now, paidTotal));
    if (toMarket < 0n) {
      // The market paying into a settlement debits its own account against its floor: the transaction path's.
      plain.job.workPerTask = before;
      return null;
    }
    settle = { consumerId: plain.job.ownerId, toMarket, charged, paidTotal, memo: JSON.stringify(memo), result: JSON.stringify(countedOutputs(plain.job.taskCount)) };
  }
  return { c, now: plain.now, resultId: rowId(), agreedOwners: plain.agreedOwners, amount, paidSeconds: p.paidSeconds, entry, refined: work !== null, settle };
}

/** What a row pays its producer out of the job's escrow (dedicated machines are paid by contract). */
export const paidBy = (row: PlainRow) => (row.entry ? row.amount : 0n);

/**
 * The rows of a group commit's plain reports (results.ts `plain`: a successful run that decides a
 * task without copies and leaves its job running, paid within its cap and its escrow, on a
 * machine whose reputation is already at the top), written for the whole group in one statement:
 * the rows completeTask writes one by one, many to a statement. See PLAIN_ROWS_SQL.
 * Any other report is written alone by completeTask's own `write`, after `flush` has written the
 * plain rows before it, so it sees the escrow and the job as they are.
 */
export class PlainRows {
  private rows: PlainRow[] = [];
  /** The escrow of each job of the group as this transaction has it, the pending rows' payments taken off. */
  private escrow: Map<string, bigint> | null = null;

  constructor(
    private market: Market,
    private tx: Tx,
    private jobIds: string[],
  ) {}

  /** Takes the report as a plain row and returns it, or null: the caller writes it alone (after `flush`). */
  async take(c: Completion, step: CompletionStep): Promise<PlainRow | null> {
    if (!step.plain) return null;
    this.escrow ??= await this.readEscrows();
    const held = this.escrow.get(step.plain.job.id) ?? 0n;
    const row = plainRow(this.market, c, step, held);
    if (!row) return null;
    this.escrow.set(step.plain.job.id, held - paidBy(row));
    this.rows.push(row);
    return row;
  }

  private async readEscrows() {
    const accounts = await this.tx.$queryRaw<{ jobId: string; balance: string }[]>`
      SELECT "jobId", "balanceMicro"::text AS balance FROM "LedgerAccount" WHERE "jobId" = ANY(${this.jobIds}::text[])`;
    return new Map(accounts.map((a) => [a.jobId, BigInt(a.balance)]));
  }

  /** Writes the pending rows. A report written alone next may move escrows: they are read again after it. */
  async flush() {
    const rows = this.rows;
    this.rows = [];
    this.escrow = null;
    if (!rows.length) return;
    await writePlainRows(this.market, (_name, text, values) => this.tx.$queryRawUnsafe(text, ...values), rows);
  }
}

/**
 * One statement for a whole group, so one round trip whatever its size, and atomic by itself:
 * the results (accepted, with what each was paid), the leases completed, the tasks done with
 * their accepted result, the jobs' done counts and refined work, the payments' ledger entries
 * under their unique keys `pay:<result>`, each escrow debited once for the group only down to its
 * floor (less the penalty the market holds in it, as the engine's runPay counts it), each
 * producer credited once, and the postings. A job whose last task is in the group is settled in
 * the same statement, as settleCompleted settles it (ledger/settlement.ts): its entry under
 * `settle:<job>`, the escrow's rest moved out, the market's share and the consumer's rest, and
 * the job completed with its charge. An escrow that cannot cover its payments fails the whole
 * statement (the cast of a text that is not a number is the only way a plain statement can
 * raise), so nothing of the group is written and its reports are written one by one instead; so
 * does a result whose lease (of that task, on that machine) or task the statement did not update
 * (the rows it updates are the result's parents, locked until the commit), and a settlement whose
 * job the ledger says was paid otherwise than memory counted, or whose escrow moved meanwhile.
 *
 * Rows are made from the parameters' arrays by `unnest` in a select list, one array a column
 * (`SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS task, ...`), which PostgreSQL walks in
 * step, and not by one `unnest($1, $2, ...)` in FROM: that form runs each array as a function
 * of its own, materialized apart, about 25 µs an array before the first row. On an idle
 * PostgreSQL, eighteen arrays of 1, 25 and 115 elements, a prepared statement run 500 times:
 * 719, 1,225 and 1,299 µs a call in FROM, 105, 416 and 809 in the select list, 95, 372 and 759
 * to read the arrays alone. This statement took forty arrays so; in the closed mixed load
 * (bench:load, 1,000 machines and 50 consumers, 90 s, `--statements`, two alternating pairs) it
 * took 2.3-2.4 ms on average against 5.0, for groups of about 20 reports, and PostgreSQL 0.46-0.48
 * ms of CPU a task against 0.59-0.60. The statements that make rows from fewer arrays, or once a
 * job (admission.ts, intake.ts, rebalance.ts, liveness.ts), keep them in FROM: changed the same
 * way, the closed load's admission took 1.59 ms against 1.48 (one pair), and bench:dispatch's
 * thousand-task jobs ran at 4,137 and 3,445 tasks/s against 4,963 and 4,492 (two pairs).
 */
const PLAIN_ROWS_SQL = `
WITH v AS (
  SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS task, unnest($3::text[]) AS lease, unnest($4::text[]) AS machine,
    unnest($5::int[]) AS exit, unnest($6::text[]) AS out, unnest($7::text[]) AS err, unnest($8::text[]) AS hash, unnest($9::int[]) AS ms,
    unnest($10::bigint[]) AS paid, unnest($11::float8[]) AS at, unnest($12::int[]) AS owners, unnest($13::text[]) AS entry,
    unnest($14::text[]) AS job, unnest($15::text[]) AS memo, unnest($16::text[]) AS producer, unnest($17::text[]) AS debit, unnest($18::text[]) AS credit
), s AS (
  SELECT unnest($29::text[]) AS job, unnest($30::text[]) AS entry, unnest($31::text[]) AS consumer, unnest($32::bigint[]) AS to_market,
    unnest($33::text[]) AS memo, unnest($34::bigint[]) AS paid_before, unnest($35::bigint[]) AS charged, unnest($36::float8[]) AS at,
    unnest($37::text[]) AS result, unnest($38::text[]) AS p_escrow, unnest($39::text[]) AS p_market, unnest($40::text[]) AS p_consumer
), results AS (
  INSERT INTO "Result" (id, "taskId", "leaseId", "machineId", "exitCode", stdout, stderr, "outputHash", "elapsedMs", accepted, "paidMicro", implausible, "createdAt")
  SELECT id, task, lease, machine, exit, decode(out, 'base64'), decode(err, 'base64'), hash, ms, true, paid, false, timestamp 'epoch' + at * interval '1 millisecond' FROM v
  RETURNING 1
), leases AS (
  UPDATE "Lease" l SET status = 'completed'::"LeaseStatus", "endedAt" = timestamp 'epoch' + v.at * interval '1 millisecond'
  -- The lease of this task on this machine: a result row has no foreign keys (migration
  -- 20261124081500_result_rows_unchecked), so this statement is what proves its parents exist.
  FROM v WHERE l.id = ANY($3::text[]) AND l.id = v.lease AND l."taskId" = v.task AND l."machineId" = v.machine
  RETURNING 1
), tasks AS (
  UPDATE "Task" t SET status = 'done'::"TaskStatus", "completedAt" = timestamp 'epoch' + v.at * interval '1 millisecond', "acceptedResultId" = v.id, "agreedOwners" = v.owners
  -- Rows found by key from the arrays themselves, as leases.ts LEASE_ROWS_SQL does (and why).
  FROM v WHERE t.id = ANY($2::text[]) AND t.id = v.task
  RETURNING 1
), jobs AS (
  UPDATE "Job" j SET "tasksDone" = j."tasksDone" + d.n, "workPerTask" = COALESCE(d.work, j."workPerTask"),
    status = CASE WHEN s.job IS NULL THEN j.status ELSE 'completed'::"JobStatus" END,
    "completedAt" = CASE WHEN s.job IS NULL THEN j."completedAt" ELSE timestamp 'epoch' + s.at * interval '1 millisecond' END,
    "chargedMicro" = CASE WHEN s.job IS NULL THEN j."chargedMicro" ELSE s.charged END,
    result = CASE WHEN s.job IS NULL THEN j.result ELSE s.result::jsonb END
  FROM (SELECT unnest($19::text[]) AS id, unnest($20::int[]) AS n, unnest($21::float8[]) AS work) AS d LEFT JOIN s ON s.job = d.id
  WHERE j.id = d.id
  RETURNING 1
), entries AS (
  INSERT INTO "LedgerEntry" (id, kind, "uniqueKey", "jobId", "taskId", memo)
  SELECT entry, 'payment', 'pay:' || id, job, task, memo::jsonb FROM v WHERE entry IS NOT NULL
  UNION ALL
  SELECT entry, 'settlement', 'settle:' || job, job, NULL, memo::jsonb FROM s
  RETURNING 1
), escrows AS (
  -- A settled job's escrow gives up its whole rest, as read here: only if nothing moved it since.
  UPDATE "LedgerAccount" a SET "balanceMicro" = CASE WHEN d.settles THEN 0 ELSE a."balanceMicro" - d.amount END
  FROM (SELECT d.*, x."balanceMicro" AS before
    FROM (SELECT unnest($22::text[]) AS job, unnest($23::bigint[]) AS amount, unnest($24::bigint[]) AS held, unnest($41::bool[]) AS settles) AS d
    JOIN "LedgerAccount" x ON x."jobId" = d.job) d
  WHERE a."jobId" = d.job AND a."balanceMicro" - d.amount >= a."minBalanceMicro" + d.held AND (NOT d.settles OR a."balanceMicro" = d.before)
  RETURNING a.id, a."jobId", d.before - d.amount AS rest
), producers AS (
  INSERT INTO "LedgerAccount" (id, kind, "userId", "balanceMicro")
  SELECT c.id, 'producer'::"AccountKind", c.owner, c.amount FROM (SELECT unnest($25::text[]) AS id, unnest($26::text[]) AS owner, unnest($27::bigint[]) AS amount) AS c
  ON CONFLICT (kind, "userId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + EXCLUDED."balanceMicro"
  RETURNING id, "userId"
), settled AS (
  SELECT s.*, e.id AS account, e.rest AS held FROM s JOIN escrows e ON e."jobId" = s.job
), market AS (
  UPDATE "LedgerAccount" SET "balanceMicro" = "balanceMicro" + $42::bigint
  WHERE kind = 'market'::"AccountKind" AND "userId" = $43::text AND $42::bigint <> 0
  RETURNING id
), consumers AS (
  INSERT INTO "LedgerAccount" (id, kind, "userId", "balanceMicro")
  SELECT gen_random_uuid()::text, 'consumer'::"AccountKind", consumer, sum(held - to_market) FROM settled GROUP BY consumer
  ON CONFLICT (kind, "userId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + EXCLUDED."balanceMicro"
  RETURNING id, "userId"
), postings AS (
  INSERT INTO "LedgerPosting" (id, "entryId", "accountId", "amountMicro")
  SELECT v.debit, v.entry, e.id, -v.paid FROM v JOIN escrows e ON e."jobId" = v.job WHERE v.debit IS NOT NULL
  UNION ALL
  SELECT v.credit, v.entry, p.id, v.paid FROM v JOIN producers p ON p."userId" = v.producer WHERE v.credit IS NOT NULL
  UNION ALL
  SELECT p_escrow, entry, account, -held FROM settled WHERE held <> 0
  UNION ALL
  SELECT p_market, entry, (SELECT id FROM market), to_market FROM settled WHERE to_market <> 0
  UNION ALL
  -- Kept when zero, as settleCompleted keeps it: the consumer's statement shows the job was settled.
  SELECT s.p_consumer, s.entry, c.id, s.held - s.to_market FROM settled s JOIN consumers c ON c."userId" = s.consumer
  RETURNING 1
)
SELECT CASE WHEN (SELECT count(*) FROM escrows) <> $28::int THEN ('escrow-short:' || (SELECT count(*) FROM escrows))::int END AS short,
  CASE WHEN (SELECT count(*) FROM leases) <> cardinality($1::text[]) OR (SELECT count(*) FROM tasks) <> cardinality($1::text[])
    THEN ('lease-not-found:' || (SELECT count(*) FROM leases))::int END AS unheld,
  -- The ledger's payments before this statement as memory counted them, and an escrow that covers the market's share.
  CASE WHEN (SELECT count(*) FROM settled WHERE held >= to_market AND (${paidForJobSql("settled.job")})::bigint = paid_before) <> cardinality($29::text[])
    THEN ('settlement-differs:' || (SELECT count(*) FROM settled))::int END AS unsettled,
  (SELECT count(*) FROM results) AS results, (SELECT count(*) FROM postings) AS postings`;

/** Writes `rows` with PLAIN_ROWS_SQL through `run`. */
export async function writePlainRows(market: Market, run: RunStatement, rows: PlainRow[]) {
  const done = new Map<string, number>();
  const debits = new Map<string, bigint>();
  const credits = new Map<string, bigint>();
  for (const r of rows) {
    const jobId = r.c.task.jobId;
    done.set(jobId, (done.get(jobId) ?? 0) + 1);
    // A settled job's escrow is moved by the statement even when none of its runs here was paid.
    if (r.settle) debits.set(jobId, debits.get(jobId) ?? 0n);
    if (paidBy(r) === 0n) continue;
    debits.set(jobId, (debits.get(jobId) ?? 0n) + r.amount);
    credits.set(r.c.machine.ownerId, (credits.get(r.c.machine.ownerId) ?? 0n) + r.amount);
  }
  // A job's refined work as memory holds it now, where the rows' runs moved it (plainRow).
  const refined = new Set(rows.filter((r) => r.refined).map((r) => r.c.task.jobId));
  // Zero amounts post nothing (ledger.ts `post`): the entry alone records the run.
  const moves = (r: PlainRow) => r.entry && r.amount !== 0n;
  const jobIds = [...done.keys()];
  const settled = rows.filter((r): r is PlainRow & { settle: PlainSettlement } => r.settle !== null);
  const settles = new Set(settled.map((r) => r.c.task.jobId));
  const ids = (n: number) => Array.from({ length: n }, () => rowId());
  await run("plain-reports", PLAIN_ROWS_SQL, [
    rows.map((r) => r.resultId),
    rows.map((r) => r.c.task.id),
    rows.map((r) => r.c.lease.id),
    rows.map((r) => r.c.machine.id),
    rows.map((r) => r.c.report.exitCode),
    rows.map((r) => r.c.stdout.toString("base64")),
    rows.map((r) => r.c.stderr.toString("base64")),
    rows.map((r) => r.c.hash),
    rows.map((r) => storedMs(r.c.report.elapsedMs)),
    rows.map((r) => String(r.amount)),
    rows.map((r) => r.now),
    rows.map((r) => r.agreedOwners),
    rows.map((r) => (r.entry ? rowId() : null)),
    rows.map((r) => r.c.task.jobId),
    rows.map((r) => (r.entry ? JSON.stringify({ machineId: r.c.machine.id, seconds: r.paidSeconds, reportedSeconds: storedMs(r.c.report.elapsedMs) / 1000, failed: false }) : null)),
    rows.map((r) => r.c.machine.ownerId),
    rows.map((r) => (moves(r) ? rowId() : null)),
    rows.map((r) => (moves(r) ? rowId() : null)),
    jobIds,
    jobIds.map((id) => done.get(id)!),
    jobIds.map((id) => (refined.has(id) ? (market.state.jobs.get(id)?.workPerTask ?? null) : null)),
    [...debits.keys()],
    [...debits.values()].map(String),
    [...debits.keys()].map((id) => String(market.state.jobs.get(id)?.penaltyHeldMicro ?? 0n)),
    [...credits.keys()].map(() => rowId()),
    [...credits.keys()],
    [...credits.values()].map(String),
    debits.size,
    settled.map((r) => r.c.task.jobId),
    ids(settled.length),
    settled.map((r) => r.settle.consumerId),
    settled.map((r) => String(r.settle.toMarket)),
    settled.map((r) => r.settle.memo),
    // What the ledger held of the job's payments before this statement: all of them but this group's.
    settled.map((r) => String(r.settle.paidTotal - (debits.get(r.c.task.jobId) ?? 0n))),
    settled.map((r) => String(r.settle.charged)),
    settled.map((r) => r.now),
    settled.map((r) => r.settle.result),
    ids(settled.length),
    ids(settled.length),
    ids(settled.length),
    [...debits.keys()].map((id) => settles.has(id)),
    String(settled.reduce((sum, r) => sum + r.settle.toMarket, 0n)),
    MARKET_OWNER,
  ]);
}
