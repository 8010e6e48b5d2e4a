// What a bench must not break, read from PostgreSQL once the load is over: every task of the
// bench's jobs is done with exactly one accepted result, paid exactly once, and no payment under
// it but for that result or a failed run of it (see `audit`), every job's payments are what its
// results were paid, every job is completed and settled once with an empty escrow, and the
// ledger sums to zero. `lost` counts every way this
// fails, so a bench that prints `"lost": 0` has checked the books, not assumed them.
import type { Db } from "../src/db/client.ts";

export interface Books {
  tasks: number;
  /** Tasks not done, without exactly one accepted result, whose accepted result is not paid exactly once, or with a payment for anything but it or a failed run. */
  tasksLost: number;
  /** Jobs not completed, not settled exactly once, or with money left in escrow. */
  jobsUnsettled: number;
  /** Jobs whose payment entries credited producers other than the sum of what its results say they were paid. */
  jobsMispaid: number;
  /** Sum of all ledger accounts and of all entries' postings (both must be zero), in micro-credits. */
  ledgerSumMicro: string;
  unbalancedEntries: number;
  lost: number;
  /** The first lost tasks (at most LOST_SHOWN), each with what its rows say, so a lost task names the guarantee it broke. */
  lostTasks?: LostTask[];
}

/** What the database holds for a lost task: its status, its results and its payments, each with its run. */
export interface LostTask {
  taskId: string;
  jobId: string;
  index: number;
  status: string;
  attempts: number;
  acceptedResultId: string | null;
  results: { id: string; leaseId: string; leaseStatus: string; exitCode: number; accepted: boolean; error: string | null; paidMicro: string | null }[];
  payments: { resultId: string; failed: boolean | null; amountMicro: string }[];
  leases: { id: string; status: string }[];
}

const LOST_SHOWN = 10;

export async function audit(db: Db, jobIds: string[]): Promise<Books> {
  // A task is whole when it is done with exactly one accepted result, the one it names, paid
  // exactly once (its piece on the result, or held for lateness and settled with its job; a run
  // written alone has its own payment entry, pay:<result>, a group's runs share one per job and
  // producer), and nothing else under it is paid but failed runs another owner reproduced
  // (money.test.ts "a failed run"), which only a task that failed for good has.
  const [tasks] = await db.$queryRaw<{ tasks: bigint; lost: bigint; shown: string[] | null }[]>`
    WITH results AS (SELECT r.*, l."taskId" FROM "Result" r JOIN "Lease" l ON l.id = r.id), checked AS (
      SELECT t.id, t."jobId", t.index,
        (t.status <> 'done' OR coalesce(r.accepted, 0) <> 1 OR r.id IS DISTINCT FROM t."acceptedResultId"
          OR (CASE WHEN r.paid THEN 1 ELSE 0 END) + (CASE WHEN r.held THEN 1 ELSE 0 END) <> 1
          OR coalesce(p.accepted_paid, 0) > 1 OR coalesce(p.unowed, 0) <> 0) AS lost
      FROM "Task" t
      LEFT JOIN (SELECT "taskId", count(*) AS accepted, min(id::text)::uuid AS id, bool_or(coalesce("heldMicro", 0) > 0) AS held,
          bool_or("paidMicro" IS NOT NULL) AS paid FROM results WHERE accepted GROUP BY "taskId") r ON r."taskId" = t.id
      LEFT JOIN (
        SELECT e."taskId",
          count(*) FILTER (WHERE x.accepted AND x."taskId" = e."taskId" AND NOT e.failed) AS accepted_paid,
          count(*) FILTER (WHERE x.id IS NULL OR x."taskId" <> e."taskId"
            OR NOT (CASE WHEN e.failed THEN NOT x.accepted AND x."failureConfirmed" ELSE x.accepted END)) AS unowed
        FROM (SELECT *, coalesce(memo->>'of' = 'failure', false) AS failed FROM "LedgerEntry") e
        LEFT JOIN results x ON x.id::text = substr(e."uniqueKey", 5)
        WHERE e.kind = 'payment' GROUP BY e."taskId") p ON p."taskId" = t.id
      WHERE t."jobId" = ANY(${jobIds}::text[]))
    SELECT count(*) AS tasks, count(*) FILTER (WHERE lost) AS lost,
      (array_agg(id ORDER BY "jobId", index) FILTER (WHERE lost))[1:${LOST_SHOWN}] AS shown
    FROM checked`;
  const [jobs] = await db.$queryRaw<{ unsettled: bigint }[]>`
    SELECT count(*) FILTER (WHERE j.status <> 'completed' OR j."tasksDone" <> j."taskCount" OR coalesce(s.n, 0) <> 1 OR coalesce(e."balanceMicro", 0) <> 0) AS unsettled
    FROM "Job" j
    LEFT JOIN (SELECT "jobId", count(*) AS n FROM "LedgerEntry" WHERE kind = 'settlement' GROUP BY "jobId") s ON s."jobId" = j.id
    LEFT JOIN "LedgerAccount" e ON e.kind = 'escrow' AND e."jobId" = j.id
    WHERE j.id = ANY(${jobIds}::text[])`;
  // What each job's payment entries credited producers, against what its results say each run was paid.
  const [mispaid] = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM unnest(${jobIds}::text[]) j(id)
    WHERE (SELECT coalesce(sum(p."amountMicro"), 0) FROM "LedgerEntry" e JOIN "LedgerPosting" p ON p."entryId" = e.id JOIN "LedgerAccount" a ON a.id = p."accountId"
             WHERE e."jobId" = j.id AND e.kind = 'payment' AND a.kind = 'producer')
       <> (SELECT coalesce(sum(r."paidMicro"), 0) FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id WHERE t."jobId" = j.id)`;
  const [ledger] = await db.$queryRaw<{ sum: unknown; unbalanced: bigint }[]>`
    SELECT (SELECT sum("balanceMicro") FROM "LedgerAccount") AS sum,
           (SELECT count(*) FROM (SELECT "entryId" FROM "LedgerPosting" GROUP BY "entryId" HAVING sum("amountMicro") <> 0) x) AS unbalanced`;
  const tasksLost = Number(tasks!.lost);
  const lostTasks = tasks!.shown?.length ? await lostDetail(db, tasks!.shown) : [];
  const jobsUnsettled = Number(jobs!.unsettled);
  const jobsMispaid = Number(mispaid!.n);
  const sum = BigInt(String(ledger!.sum ?? 0)); // numeric: PostgreSQL sums bigints exactly
  const unbalancedEntries = Number(ledger!.unbalanced);
  return {
    tasks: Number(tasks!.tasks),
    tasksLost,
    jobsUnsettled,
    jobsMispaid,
    ledgerSumMicro: String(sum),
    unbalancedEntries,
    lost: tasksLost + jobsUnsettled + jobsMispaid + unbalancedEntries + (sum === 0n ? 0 : 1),
    ...(lostTasks.length ? { lostTasks } : {}),
  };
}

/** The rows behind the first lost tasks: each result with its lease, each payment with the run it paid. */
async function lostDetail(db: Db, taskIds: string[]): Promise<LostTask[]> {
  const rows = await db.$queryRaw<{ detail: LostTask }[]>`
    SELECT json_build_object(
      'taskId', t.id, 'jobId', t."jobId", 'index', t.index, 'status', t.status, 'attempts', t.attempts, 'acceptedResultId', t."acceptedResultId",
      'results', coalesce((SELECT json_agg(json_build_object('id', r.id, 'leaseId', r.id, 'leaseStatus', l.status, 'exitCode', r."exitCode",
          'accepted', r.accepted, 'error', r.error->>'code', 'paidMicro', r."paidMicro"::text) ORDER BY r."createdAt")
        FROM "Lease" l JOIN "Result" r ON r.id = l.id WHERE l."taskId" = t.id), '[]'),
      'payments', coalesce((SELECT json_agg(json_build_object('resultId', substr(e."uniqueKey", 5), 'failed', coalesce(e.memo->>'of' = 'failure', false),
          'amountMicro', (SELECT coalesce(sum(p."amountMicro"), 0)::text FROM "LedgerPosting" p WHERE p."entryId" = e.id AND p."amountMicro" > 0)) ORDER BY e."createdAt")
        FROM "LedgerEntry" e WHERE e.kind = 'payment' AND e."taskId" = t.id), '[]'),
      'leases', coalesce((SELECT json_agg(json_build_object('id', l.id, 'status', l.status) ORDER BY l."issuedAt") FROM "Lease" l WHERE l."taskId" = t.id), '[]')
    ) AS detail
    FROM "Task" t WHERE t.id = ANY(${taskIds}::text[]) ORDER BY t."jobId", t.index`;
  return rows.map((r) => r.detail);
}
