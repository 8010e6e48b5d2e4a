import { ledgerCtes, ledgerChecks, type LedgerParams } from "./ledger-rows.ts";
import { statement, type Placeholders } from "./statement.ts";

/** What every admission statement takes: the decision, its ledger rows, its log rows, its placements. */
export interface AdmissionParams extends LedgerParams {
  jobId: string;
  ownerId: string;
  status: string;
  decision: string;
  now: number;
  completionAt: number | null;
  price: string | null;
  pilotPrice: string | null;
  pricing: string;
  escrow: string;
  maxSpend: string | null;
  submitNetwork: string | null;
  decisionIds: string[];
  decisionAt: number[];
  decisionOutcomes: string[];
  decisionMachines: (string | null)[];
  decisionTasks: number[];
  decisionReasons: string[];
  decisionDetails: (string | null)[];
  placedTasks: string[];
  placedMachines: string[];
}

/** A small job's row and tasks, written by its admission (tasks/admission.ts InlineIntake). */
export interface IntakeParams extends AdmissionParams {
  name: string;
  example: string | null;
  moduleHash: string;
  benefit: string;
  replicas: number;
  taskCount: number;
  workPerTask: number;
  declaredWorkPerTask: number | null;
  workEstimate: string;
  pilotCount: number | null;
  memoryMbPerTask: number;
  taskLimits: string | null;
  /** The consumer lets the producers who run it see the job's name. */
  nameToProducers: boolean;
  managerId: string;
  /** A part of a split job: the whole, and where its tasks start in it (null, 0: a job of its own). */
  partOf: string | null;
  taskOffset: number;
  taskIds: string[];
  taskIndexes: number[];
  taskReplicas: number[];
  taskArgs: string[];
  taskStdins: Uint8Array[];
  taskEnvs: (string | null)[];
  taskFiles: (string | null)[];
  /** Tasks leased at once to idle machines waiting on their streams, with each lease's terms. */
  leaseIds: string[];
  leaseTasks: string[];
  leaseMachines: string[];
  leaseExpires: number[];
  leasePieces: string[];
  leasePilots: boolean[];
  leaseAhead: number[];
}

const ms = (x: string) => `timestamp 'epoch' + ${x}::float8 * interval '1 millisecond'`;

/**
 * An admission's statement around the job's own row (`job`) and its tasks (`placed`): the ledger's
 * rows (the escrow entry, ledger/entries.ts `escrow`; a consumer whose balance cannot cover it
 * fails the statement by the floor's constraint, FloorCrossed), the decision log's rows, and the
 * refusals it checks. One statement is one transaction: all of it is written or none.
 */
const admission = <P extends AdmissionParams>(p: Placeholders<P>, job: string, placed: string, more = "", refusals = "") => `
WITH ${ledgerCtes(p)}, job AS (${job}), decisions AS (
  INSERT INTO "MarketDecision" (id, at, outcome, "jobId", "machineId", "userId", tasks, reasons, detail)
  SELECT d.id, ${ms("d.at")}, d.outcome::"DecisionOutcome", ${p.jobId}, d.machine, ${p.ownerId}, d.tasks, d.reasons::jsonb, d.detail::jsonb
  FROM (SELECT unnest(${p.decisionIds}::text[]) AS id, unnest(${p.decisionAt}::float8[]) AS at, unnest(${p.decisionOutcomes}::text[]) AS outcome,
    unnest(${p.decisionMachines}::text[]) AS machine, unnest(${p.decisionTasks}::int[]) AS tasks, unnest(${p.decisionReasons}::text[]) AS reasons,
    unnest(${p.decisionDetails}::text[]) AS detail) d
  RETURNING 1
), placed AS (${placed})${more}
SELECT CASE
  WHEN NOT (SELECT ok FROM ledger_all_new) THEN market_refuse('ledger-entry-exists')
  WHEN NOT EXISTS (SELECT 1 FROM job) THEN market_refuse('job-not-in-intake')${refusals}
  END AS refused, ${ledgerChecks(p)} AS checked, (SELECT count(*) FROM placed) AS placed, (SELECT count(*) FROM decisions) AS decisions`;

/** A placed task queued on its machine (a job stored before its decision). The ids are matched against the array too, so rows are found by key. */
const queuePlaced = (p: Placeholders<AdmissionParams>) => `
  UPDATE "Task" t SET "machineId" = x.machine, status = 'queued'::"TaskStatus"
  FROM (SELECT unnest(${p.placedTasks}::text[]) AS id, unnest(${p.placedMachines}::text[]) AS machine) x
  WHERE t.id = x.id AND t.id = ANY(${p.placedTasks}::text[])
  RETURNING 1`;

/** The decision on a job stored in intake: its row is updated, its placed tasks queued. */
export const admitJob = statement<AdmissionParams, { refused: number | null }>("admit-job", (p) =>
  admission(
    p,
    `
  UPDATE "Job" SET status = ${p.status}::"JobStatus", decision = ${p.decision}::jsonb, "submittedAt" = ${ms(p.now)}, "decidedAt" = ${ms(p.now)},
    "expectedCompletionAt" = ${ms(p.completionAt)}, "quotedPriceMicro" = ${p.price}::bigint, "pilotPriceMicro" = ${p.pilotPrice}::bigint,
    pricing = ${p.pricing}, "escrowMicro" = ${p.escrow}::bigint, "maxSpendMicro" = ${p.maxSpend}::bigint, "submitNetwork" = ${p.submitNetwork}
  WHERE id = ${p.jobId} AND "decidedAt" IS NULL
  RETURNING 1`,
    queuePlaced(p),
  ),
);

/**
 * A delayed job's new answer: its row, still delayed, updated as decided (its arrival kept, a
 * pilot price kept unless a new one is set); its placed tasks queued; a rejected job's tasks
 * removed. A job no longer delayed matches nothing, and the statement is refused (job-not-in-intake).
 */
export const settleDelayedJob = statement<AdmissionParams, { refused: number | null }>("settle-delayed-job", (p) =>
  admission(
    p,
    `
  UPDATE "Job" SET status = ${p.status}::"JobStatus", decision = ${p.decision}::jsonb, "decidedAt" = ${ms(p.now)},
    "expectedCompletionAt" = ${ms(p.completionAt)}, "quotedPriceMicro" = ${p.price}::bigint, "pilotPriceMicro" = COALESCE(${p.pilotPrice}::bigint, "pilotPriceMicro"),
    pricing = ${p.pricing}, "escrowMicro" = ${p.escrow}::bigint
  WHERE id = ${p.jobId} AND status = 'delayed'::"JobStatus"
  RETURNING 1`,
    queuePlaced(p),
    `, dropped AS (
  DELETE FROM "Task" WHERE "jobId" = ${p.jobId} AND ${p.status}::"JobStatus" = 'rejected'::"JobStatus" AND EXISTS (SELECT 1 FROM job)
  RETURNING 1
)`,
  ),
);

/**
 * The decision on a small job with its intake: its row inserted as decided, its tasks inserted
 * queued where placed (leased where leased at once) and pending elsewhere, as intake.ts writes
 * them. The rows are inserted by sibling CTEs of the same statement, so their foreign keys are
 * checked once it has run. A lease row has no foreign keys (migration
 * 20261126150000_lease_rows_unchecked): each is written only for a task this statement inserted
 * leased on that machine, and the statement is refused unless every lease was.
 */
export const admitJobWithIntake = statement<IntakeParams, { refused: number | null }>("admit-job-with-intake", (p) =>
  admission(
    p,
    `
  INSERT INTO "Job" (id, "ownerId", name, example, "moduleHash", benefit, replicas, status, decision, "taskCount", "workPerTask",
    "declaredWorkPerTask", "workEstimate", "pilotCount", "memoryMbPerTask", "taskLimits", "submittedAt", "decidedAt",
    "expectedCompletionAt", "quotedPriceMicro", "pilotPriceMicro", pricing, "escrowMicro", "maxSpendMicro", "submitNetwork", "nameToProducers", "managerId", "partOf", "taskOffset")
  VALUES (${p.jobId}, ${p.ownerId}, ${p.name}, ${p.example}, ${p.moduleHash}, ${p.benefit}::jsonb, ${p.replicas}::int, ${p.status}::"JobStatus", ${p.decision}::jsonb,
    ${p.taskCount}::int, ${p.workPerTask}::float8, ${p.declaredWorkPerTask}::float8, ${p.workEstimate}, ${p.pilotCount}::int, ${p.memoryMbPerTask}::int,
    ${p.taskLimits}::jsonb, ${ms(p.now)}, ${ms(p.now)}, ${ms(p.completionAt)}, ${p.price}::bigint, ${p.pilotPrice}::bigint, ${p.pricing},
    ${p.escrow}::bigint, ${p.maxSpend}::bigint, ${p.submitNetwork}, ${p.nameToProducers}::boolean, ${p.managerId}, ${p.partOf}::text, ${p.taskOffset}::int)
  RETURNING 1`,
    `
  INSERT INTO "Task" ("id", "jobId", "index", "replica", "args", "stdin", "env", "files", "status", "machineId", attempts)
  SELECT t.id, ${p.jobId}, t.idx, t.replica, ARRAY(SELECT jsonb_array_elements_text(t.args)), t.stdin, t.env, t.files,
    CASE WHEN l.task IS NOT NULL THEN 'leased'::"TaskStatus" WHEN x.machine IS NULL THEN 'pending'::"TaskStatus" ELSE 'queued'::"TaskStatus" END,
    x.machine, CASE WHEN l.task IS NULL THEN 0 ELSE 1 END
  FROM (SELECT unnest(${p.taskIds}::text[]) AS id, unnest(${p.taskIndexes}::int[]) AS idx, unnest(${p.taskReplicas}::int[]) AS replica,
    unnest(${p.taskArgs}::jsonb[]) AS args, unnest(${p.taskStdins}::bytea[]) AS stdin, unnest(${p.taskEnvs}::jsonb[]) AS env, unnest(${p.taskFiles}::jsonb[]) AS files) t
  LEFT JOIN (SELECT unnest(${p.placedTasks}::text[]) AS id, unnest(${p.placedMachines}::text[]) AS machine) x ON x.id = t.id
  LEFT JOIN (SELECT unnest(${p.leaseTasks}::text[]) AS task) l ON l.task = t.id
  WHERE ${p.status}::"JobStatus" <> 'rejected'::"JobStatus"
  RETURNING id, status, "machineId"`,
    `, leases AS (
  INSERT INTO "Lease" (id, "taskId", "machineId", status, "issuedAt", "expiresAt", "pieceRateMicro", pilot, ahead)
  SELECT l.id, l.task, l.machine, 'active'::"LeaseStatus", ${ms(p.now)}, ${ms("l.expires")}, l.piece, l.pilot, l.ahead
  FROM (SELECT unnest(${p.leaseIds}::uuid[]) AS id, unnest(${p.leaseTasks}::text[]) AS task, unnest(${p.leaseMachines}::text[]) AS machine,
    unnest(${p.leaseExpires}::float8[]) AS expires, unnest(${p.leasePieces}::bigint[]) AS piece, unnest(${p.leasePilots}::bool[]) AS pilot,
    unnest(${p.leaseAhead}::int[]) AS ahead) l
  JOIN placed x ON x.id = l.task AND x.status = 'leased'::"TaskStatus" AND x."machineId" = l.machine
  RETURNING 1
)`,
    `
  WHEN (SELECT count(*) FROM leases) <> cardinality(${p.leaseIds}::uuid[]) THEN market_refuse('lease-task-not-inserted')`,
  ),
);
