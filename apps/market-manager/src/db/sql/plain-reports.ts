import { ledgerChecks, ledgerCtes, type LedgerParams } from "./ledger-rows.ts";
import { statement } from "./statement.ts";

export interface PlainReportsParams extends LedgerParams {
  // One row per report; a result takes its lease's id.
  taskIds: string[];
  leaseIds: string[];
  machineIds: string[];
  exitCodes: number[];
  stdouts: string[];
  stderrs: string[];
  hashes: string[];
  elapsedMs: number[];
  paid: string[];
  at: number[];
  agreedOwners: number[];
  // One row per job of the group.
  jobIds: string[];
  jobDone: number[];
  /** The work leases are fixed at after the group's runs (null: unchanged). */
  jobWork: (number | null)[];
  /** The group's work samples of each job, as a JSON array of { owner, work }. */
  jobSamples: string[];
  // The jobs the group settles.
  settledJobs: string[];
  settledCharged: string[];
  settledAt: number[];
  settledResults: string[];
  // Machines whose speed the group's runs measured.
  speedMachines: string[];
  speeds: number[];
}

/**
 * A group's plain reports in one statement (tasks/report-rows.ts): so one round trip whatever its
 * size, and atomic by itself. The results (accepted, with what each was paid), the leases
 * completed, the tasks done with their accepted result, the jobs' done counts, work samples and
 * the work their next leases are fixed at, the machines' measured speeds, and the ledger's rows of
 * the group's payments (one per job and producer, the sum of its results' pieces) and settlements
 * as ledger/entries.ts wrote them (ledger-rows.ts). A job whose last task is in the group is
 * completed with its charge, and its escrow must end empty.
 *
 * Refused, so that nothing of the group is written (its reports are then written one by one):
 * a result whose lease (active, of that task, on that machine) or task (leased: a task is done,
 * and so paid, once) it did not update (a result row has no foreign keys, migration
 * 20261124081500_result_rows_unchecked: the rows it updates are the result's parents, locked until
 * the commit), and a settled job whose escrow held other than memory counted. A second result of
 * a lease fails the result's key (its lease's id); an account below its floor fails it too
 * (LedgerAccount_floor).
 *
 * Rows are made from the parameters' arrays by `unnest` in a select list, one array a column,
 * which PostgreSQL walks in step; `unnest(a, b, ...)` in FROM materializes each array apart. The
 * tasks are found from the group's rows, each by its key: named by an id array as well, the
 * tasks a generic plan expects still leased are a handful, and it scanned the whole group for
 * each of them.
 */
export const plainReports = statement<PlainReportsParams, { results: number; postings: number }>(
  "plain-reports",
  (p) => `
WITH v AS (
  SELECT unnest(${p.taskIds}::text[]) AS task, unnest(${p.leaseIds}::uuid[]) AS lease, unnest(${p.machineIds}::text[]) AS machine,
    unnest(${p.exitCodes}::int[]) AS exit, unnest(${p.stdouts}::text[]) AS out, unnest(${p.stderrs}::text[]) AS err, unnest(${p.hashes}::text[]) AS hash,
    unnest(${p.elapsedMs}::int[]) AS ms, unnest(${p.paid}::bigint[]) AS paid, unnest(${p.at}::float8[]) AS at, unnest(${p.agreedOwners}::int[]) AS owners
), s AS (
  SELECT unnest(${p.settledJobs}::text[]) AS job, unnest(${p.settledCharged}::bigint[]) AS charged, unnest(${p.settledAt}::float8[]) AS at,
    unnest(${p.settledResults}::text[]) AS result
), results AS (
  INSERT INTO "Result" (id, "exitCode", stdout, stderr, "outputHash", "elapsedMs", accepted, "paidMicro", "createdAt")
  SELECT lease, exit, decode(out, 'base64'), decode(err, 'base64'), decode(hash, 'hex'), ms, true, paid, timestamp 'epoch' + at * interval '1 millisecond' FROM v
  RETURNING 1
), leases AS (
  UPDATE "Lease" l SET status = 'completed'::"LeaseStatus", "endedAt" = timestamp 'epoch' + v.at * interval '1 millisecond'
  FROM v WHERE l.id = v.lease AND l."taskId" = v.task AND l."machineId" = v.machine AND l.status = 'active'::"LeaseStatus"
  RETURNING 1
), tasks AS (
  UPDATE "Task" t SET status = 'done'::"TaskStatus", "completedAt" = timestamp 'epoch' + v.at * interval '1 millisecond', "acceptedResultId" = v.lease, "agreedOwners" = v.owners
  FROM v WHERE t.id = v.task AND t.status = 'leased'::"TaskStatus"
  RETURNING 1
), jobs AS (
  UPDATE "Job" j SET "tasksDone" = j."tasksDone" + d.n, "workPerTask" = COALESCE(d.work, j."workPerTask"),
    "workSamples" = j."workSamples" || d.samples,
    status = CASE WHEN s.job IS NULL THEN j.status ELSE 'completed'::"JobStatus" END,
    "completedAt" = CASE WHEN s.job IS NULL THEN j."completedAt" ELSE timestamp 'epoch' + s.at * interval '1 millisecond' END,
    "chargedMicro" = CASE WHEN s.job IS NULL THEN j."chargedMicro" ELSE s.charged END,
    result = CASE WHEN s.job IS NULL THEN j.result ELSE s.result::jsonb END
  FROM (SELECT unnest(${p.jobIds}::text[]) AS id, unnest(${p.jobDone}::int[]) AS n, unnest(${p.jobWork}::float8[]) AS work, unnest(${p.jobSamples}::jsonb[]) AS samples) AS d
    LEFT JOIN s ON s.job = d.id
  WHERE j.id = d.id
  RETURNING 1
), machines AS (
  UPDATE "Machine" m SET speed = x.speed FROM (SELECT unnest(${p.speedMachines}::text[]) AS id, unnest(${p.speeds}::float8[]) AS speed) x WHERE m.id = x.id
  RETURNING 1
), ${ledgerCtes(p, "fatal")}
SELECT
  CASE WHEN (SELECT count(*) FROM leases) <> cardinality(${p.leaseIds}::uuid[]) OR (SELECT count(*) FROM tasks) <> cardinality(${p.leaseIds}::uuid[])
    THEN market_refuse('lease-not-found', jsonb_build_object('leases', (SELECT count(*) FROM leases), 'tasks', (SELECT count(*) FROM tasks))) END AS unheld,
  CASE WHEN NOT (SELECT ok FROM ledger_all_new) THEN market_refuse('ledger-entry-exists')
    WHEN (SELECT count(*) FROM ledger_accounts a JOIN s ON a.key = 'escrow:' || s.job WHERE a.balance = 0) <> cardinality(${p.settledJobs}::text[])
    THEN market_refuse('settlement-differs') END AS unsettled,
  ${ledgerChecks(p)} AS checked, (SELECT count(*) FROM results)::int AS results, (SELECT count(*) FROM ledger_postings)::int AS postings`,
);
