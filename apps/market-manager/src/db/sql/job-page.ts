import type { BenefitCurve, WorkSample } from "@cyclemarket/costbenefit";
import type { JsonValue } from "../generated/internal/prismaNamespace.ts";
import type { JobStatus } from "../generated/enums.ts";
import { paidForJobSql } from "./job-money.ts";
import { statement } from "./statement.ts";

interface JobParams {
  jobId: string;
}

/** Tasks with failed runs a job's page lists, the first by index. */
const MAX_FAILED_TASKS_SHOWN = 20;

/** A job's row as the page statement reads it: instants in ms since the epoch, micro-credits as decimal text. */
export interface PageJob {
  id: string;
  name: string;
  example: string | null;
  status: JobStatus;
  benefit: BenefitCurve;
  decision: unknown;
  replicas: number;
  taskCount: number;
  tasksDone: number;
  workPerTask: number;
  declaredWorkPerTask: number | null;
  workEstimate: string;
  pilotCount: number | null;
  pricing: string;
  result: unknown;
  quotedPriceMicro: string | null;
  chargedMicro: string | null;
  escrowMicro: string;
  maxSpendMicro: string | null;
  workSamples: WorkSample[];
  submittedAt: number;
  decidedAt: number | null;
  expectedCompletionAt: number | null;
  completedAt: number | null;
}

/** A task's failed runs as stored: their failure codes as text (tasks/views.ts FailedRuns reads them). */
export interface FailedRunsRow {
  taskIndex: number;
  status: string;
  runs: number;
  confirmed: number;
  codes: string[];
}

export interface JobPageRow {
  job: PageJob | null;
  escrow: string | null;
  counts: Record<string, number>;
  machines: { id: string; name: string; kind: string; tasks: number }[];
  paid: string;
  /** The settlement entry's memo (ledger/settlement.ts): what the job was charged and why. */
  settlement: { chargeMicro?: string; terms?: unknown[]; why?: string } | null;
  failures: FailedRunsRow[];
}

/**
 * What a job's page shows, in one statement (one round trip, one snapshot): the job's row, the
 * escrow's balance, the tasks by status, the machines that ran accepted results with their
 * counts, what the job has paid producers, its settlement, and its tasks with failed runs. On the
 * pages' readers, prepared once per connection: a job page is polled every second while its job
 * runs. Read in one snapshot, a page never shows a job admitted a moment ago with the escrow it
 * had before (nothing). Every part starts from the job's own rows and reaches others by key: the
 * accepted results are those its tasks name (a copy names its own when it agreed), where a join of
 * the results to the tasks let the statement's cached plan read every result of the market for
 * each page.
 */
export const jobPage = statement<JobParams, JobPageRow>(
  "job-page",
  (p) => `
SELECT
  (SELECT json_build_object(
     'id', j.id, 'name', j.name, 'example', j.example, 'status', j.status::text, 'benefit', j.benefit,
     'decision', j.decision, 'replicas', j.replicas, 'taskCount', j."taskCount", 'tasksDone', j."tasksDone",
     'workPerTask', j."workPerTask", 'declaredWorkPerTask', j."declaredWorkPerTask", 'workEstimate', j."workEstimate",
     'pilotCount', j."pilotCount", 'pricing', j.pricing, 'result', j.result,
     'quotedPriceMicro', j."quotedPriceMicro"::text, 'chargedMicro', j."chargedMicro"::text,
     'escrowMicro', j."escrowMicro"::text, 'maxSpendMicro', j."maxSpendMicro"::text, 'workSamples', j."workSamples",
     'submittedAt', (extract(epoch FROM j."submittedAt") * 1000)::float8,
     'decidedAt', (extract(epoch FROM j."decidedAt") * 1000)::float8,
     'expectedCompletionAt', (extract(epoch FROM j."expectedCompletionAt") * 1000)::float8,
     'completedAt', (extract(epoch FROM j."completedAt") * 1000)::float8)
   FROM "Job" j WHERE j.id = ${p.jobId}) AS job,
  (SELECT "balanceMicro"::text FROM "LedgerAccount" WHERE "jobId" = ${p.jobId}) AS escrow,
  (SELECT coalesce(json_object_agg(s.status, s.n), '{}'::json) FROM (SELECT status::text AS status, count(*)::int AS n FROM "Task" WHERE "jobId" = ${p.jobId} GROUP BY status) s) AS counts,
  (SELECT coalesce(json_agg(json_build_object('id', m.id, 'name', m.name, 'kind', m.kind, 'tasks', c.n) ORDER BY c.n DESC, m.id), '[]'::json)
     FROM (SELECT l."machineId", count(*)::int AS n FROM "Task" t JOIN "Lease" l ON l.id = t."acceptedResultId" WHERE t."jobId" = ${p.jobId} GROUP BY l."machineId") c
     JOIN "Machine" m ON m.id = c."machineId") AS machines,
  (${paidForJobSql(p.jobId)}) AS paid,
  (SELECT memo FROM "LedgerEntry" WHERE "uniqueKey" = 'settle:' || ${p.jobId}) AS settlement,
  (SELECT coalesce(json_agg(f ORDER BY f."taskIndex"), '[]'::json) FROM (
     SELECT t.index AS "taskIndex", min(t.status::text) AS status, count(*)::int AS runs, count(*) FILTER (WHERE r."failureConfirmed")::int AS confirmed,
       array_agg(DISTINCT r.failure ORDER BY r.failure) AS codes
     FROM "Task" t JOIN "Lease" l ON l."taskId" = t.id JOIN "Result" r ON r.id = l.id
     WHERE t."jobId" = ${p.jobId} AND (t.attempts > 1 OR t.status = 'failed'::"TaskStatus") AND r.failure IS NOT NULL
     GROUP BY t.index ORDER BY t.index LIMIT ${MAX_FAILED_TASKS_SHOWN}) f) AS failures`,
);

export interface ProgressRow {
  submittedAt: number;
  expectedCompletionAt: number | null;
  completedAt: number | null;
  benefit: JsonValue;
  taskCount: number;
  replicas: number;
  status: JobStatus;
  /** [task index, ms since the epoch] of each done copy. */
  copies: [number, number][];
}

/**
 * The job and when each of its done copies was done, in one statement on the pages' readers
 * (prepared once per connection; the chart polls it every 2 s while the job runs). Instants as
 * milliseconds since the epoch, as the market writes them (timestamps without a zone, in UTC).
 */
export const jobProgress = statement<JobParams, ProgressRow>(
  "job-progress",
  (p) => `
SELECT (extract(epoch FROM j."submittedAt") * 1000)::float8 AS "submittedAt",
  (extract(epoch FROM j."expectedCompletionAt") * 1000)::float8 AS "expectedCompletionAt",
  (extract(epoch FROM j."completedAt") * 1000)::float8 AS "completedAt",
  j.benefit, j."taskCount", j.replicas, j.status::text AS status,
  (SELECT coalesce(json_agg(json_build_array(t.index, (extract(epoch FROM t."completedAt") * 1000)::float8)), '[]'::json)
     FROM "Task" t WHERE t."jobId" = ${p.jobId} AND t.status = 'done'::"TaskStatus" AND t."completedAt" IS NOT NULL) AS copies
FROM "Job" j WHERE j.id = ${p.jobId}`,
);
