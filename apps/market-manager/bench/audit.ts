// What a bench must not break, read from PostgreSQL once the load is over: every task of the
// bench's jobs has exactly one accepted result and one payment, every job is completed and
// settled once with an empty escrow, and the ledger sums to zero. `lost` counts every way this
// fails, so a bench that prints `"lost": 0` has checked the books, not assumed them.
import type { Db } from "../src/db/client.ts";

export interface Books {
  tasks: number;
  /** Tasks without exactly one accepted result, or whose accepted result is not paid exactly once. */
  tasksLost: number;
  /** Jobs not completed, not settled exactly once, or with money left in escrow. */
  jobsUnsettled: number;
  /** Sum of all ledger accounts and of all entries' postings (both must be zero), in micro-credits. */
  ledgerSumMicro: string;
  unbalancedEntries: number;
  lost: number;
}

export async function audit(db: Db, jobIds: string[]): Promise<Books> {
  const [tasks] = await db.$queryRaw<{ tasks: bigint; lost: bigint }[]>`
    SELECT count(*) AS tasks,
           count(*) FILTER (WHERE t.status <> 'done' OR coalesce(r.accepted, 0) <> 1 OR coalesce(p.paid, 0) <> 1) AS lost
    FROM "Task" t
    LEFT JOIN (SELECT "taskId", count(*) AS accepted FROM "Result" WHERE accepted GROUP BY "taskId") r ON r."taskId" = t.id
    LEFT JOIN (SELECT "taskId", count(*) AS paid FROM "LedgerEntry" WHERE kind = 'payment' GROUP BY "taskId") p ON p."taskId" = t.id
    WHERE t."jobId" = ANY(${jobIds}::text[])`;
  const [jobs] = await db.$queryRaw<{ unsettled: bigint }[]>`
    SELECT count(*) FILTER (WHERE j.status <> 'completed' OR j."tasksDone" <> j."taskCount" OR coalesce(s.n, 0) <> 1 OR coalesce(e."balanceMicro", 0) <> 0) AS unsettled
    FROM "Job" j
    LEFT JOIN (SELECT "jobId", count(*) AS n FROM "LedgerEntry" WHERE kind = 'settlement' GROUP BY "jobId") s ON s."jobId" = j.id
    LEFT JOIN "LedgerAccount" e ON e.kind = 'escrow' AND e."jobId" = j.id
    WHERE j.id = ANY(${jobIds}::text[])`;
  const [ledger] = await db.$queryRaw<{ sum: unknown; unbalanced: bigint }[]>`
    SELECT (SELECT sum("balanceMicro") FROM "LedgerAccount") AS sum,
           (SELECT count(*) FROM (SELECT "entryId" FROM "LedgerPosting" GROUP BY "entryId" HAVING sum("amountMicro") <> 0) x) AS unbalanced`;
  const tasksLost = Number(tasks!.lost);
  const jobsUnsettled = Number(jobs!.unsettled);
  const sum = BigInt(String(ledger!.sum ?? 0)); // numeric: PostgreSQL sums bigints exactly
  const unbalancedEntries = Number(ledger!.unbalanced);
  return {
    tasks: Number(tasks!.tasks),
    tasksLost,
    jobsUnsettled,
    ledgerSumMicro: String(sum),
    unbalancedEntries,
    lost: tasksLost + jobsUnsettled + unbalancedEntries + (sum === 0n ? 0 : 1),
  };
}
