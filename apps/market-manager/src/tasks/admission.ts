import type { DecisionEntry } from "../ops/decisions.ts";
import type { RunStatement } from "./report-rows.ts";
import type { NewTask } from "./intake.ts";
import { rowId } from "../db/row-id.ts";

// A submission's decision made durable in one statement, on the market's lock: the job's row
// (stored in intake before the lock, or for a small job inserted here with its tasks), its
// decision log rows, the escrow entry with its postings and accounts, and the tasks placed on
// machines. One statement is one transaction: it is all written or none of it (a kill -9 leaves
// the job in intake, which a start removes, or for a small job nothing at all), and it costs one
// round trip where the same rows as separate statements cost about a dozen, each of which the
// market's lock waited for.

export interface Admission {
  jobId: string;
  ownerId: string;
  status: "admitted" | "delayed" | "rejected";
  /** The decision as the consumer is told it (decisionRecord). */
  record: unknown;
  now: number;
  completionAt: number | null;
  priceMicro: bigint | null;
  /** The pilots' price, for a job run as pilots first; null otherwise. */
  pilotPriceMicro: bigint | null;
  pricing: "posted" | "bid";
  /** The consumer's escrow (admitted only; the escrow entry is written for an admission only). */
  escrowMicro: bigint;
  /** The market's penalty hold beside it (jobs.ts holdPenalty). */
  penaltyHeldMicro: bigint;
  decisions: DecisionEntry[];
  /** Task id to machine id: the engine's placements. */
  placed: Map<string, string>;
  /**
   * A small job's row and tasks, written by this same statement instead of in intake before the
   * lock (see INLINE_INTAKE_TASKS): none of them exists before it commits. Absent: stored in intake.
   */
  intake?: InlineIntake;
  /**
   * With an intake: the new job's tasks leased at once to idle machines waiting on their work
   * streams (jobs.ts streamLeasesAtAdmission), written leased with their leases, the job running.
   */
  leases?: { rows: { leaseId: string; taskId: string; machineId: string }[]; expiresAt: number };
  /**
   * The job waited delayed and this is its new answer (jobs.ts settleDelayed): its row is updated
   * from delayed rather than from intake, and a rejected job's tasks are removed.
   */
  wasDelayed?: boolean;
}

/** A job's row as intake stores it, for a job whose intake is written with its admission. */
export interface InlineIntake {
  name: string;
  example: string | null;
  moduleHash: string;
  benefit: unknown;
  replicas: number;
  taskCount: number;
  workPerTask: number;
  declaredWorkPerTask: number | null;
  /** Set for a job run as pilots first: how many (workEstimate "provisional"). */
  pilotCount: number | null;
  memoryMbPerTask: number;
  taskLimits: unknown;
  nameToProducers: boolean;
  /** Every copy of every task; a placed one is written queued on its machine, the rest pending. */
  tasks: NewTask[];
}

/**
 * A job with at most this many task copies, sent small enough to be read on the market's thread,
 * is stored by its admission's statement: one round trip from submission to decision instead of
 * three (its row, its tasks, the admission), inside the lock but no longer than the admission's
 * own. A bigger job is stored in chunks before the lock (intake.ts), as other calls go on.
 */
export const INLINE_INTAKE_TASKS = 64;

const SHORT = "consumer-credits-short";

/**
 * Parameters: $1 job, $2 owner, $3 admitted, $4 escrow, $5 penalty hold, $6 the market's owner
 * id, $7 escrow account id, $8 entry id, $9 entry memo, $10 status, $11 decision, $12 now (ms),
 * $13 completion (ms), $14 price, $15 pilot price, $16 pricing, $17-$22 decision rows, $23-$24
 * placements (PARAMETERS), then an intake's (INTAKE_PARAMETERS), and the decision rows' ids after
 * every other parameter (`decisionIdsAt`). Debits are conditional on the account's floor as in
 * ledger.ts `post`; a debit that does not happen makes the last SELECT raise (a text cast to int
 * that fails), which undoes the whole statement. Zero amounts post nothing, as `post` does.
 */
const admitSql = (decisionIds: string, job: string, placed: string, more = "", refusals = "") => `
WITH payer AS (
  UPDATE "LedgerAccount" SET "balanceMicro" = "balanceMicro" - $4::bigint
  WHERE $3::boolean AND $4::bigint > 0 AND kind = 'consumer'::"AccountKind" AND "userId" = $2 AND "balanceMicro" - $4::bigint >= "minBalanceMicro"
  RETURNING id
), reserve AS (
  UPDATE "LedgerAccount" SET "balanceMicro" = "balanceMicro" - $5::bigint
  WHERE $3::boolean AND $5::bigint > 0 AND kind = 'market'::"AccountKind" AND "userId" = $6 AND "balanceMicro" - $5::bigint >= "minBalanceMicro"
  RETURNING id
), escrow AS (
  INSERT INTO "LedgerAccount" (id, kind, "jobId", "balanceMicro")
  SELECT $7, 'escrow'::"AccountKind", $1, $4::bigint + $5::bigint WHERE $3::boolean AND $4::bigint + $5::bigint <> 0
  ON CONFLICT ("jobId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + EXCLUDED."balanceMicro"
  RETURNING id
), entry AS (
  INSERT INTO "LedgerEntry" (id, kind, "uniqueKey", "jobId", memo)
  SELECT $8, 'escrow', 'escrow:' || $1, $1, $9::jsonb WHERE $3::boolean
  RETURNING id
), postings AS (
  INSERT INTO "LedgerPosting" (id, "entryId", "accountId", "amountMicro")
  SELECT gen_random_uuid()::text, e.id, p.id, -$4::bigint FROM entry e, payer p
  UNION ALL SELECT gen_random_uuid()::text, e.id, r.id, -$5::bigint FROM entry e, reserve r
  UNION ALL SELECT gen_random_uuid()::text, e.id, x.id, $4::bigint + $5::bigint FROM entry e, escrow x
  RETURNING 1
), job AS (${job}), decisions AS (
  INSERT INTO "MarketDecision" (id, at, outcome, "jobId", "machineId", "userId", tasks, reasons, detail)
  SELECT d.id, timestamp 'epoch' + d.at * interval '1 millisecond', d.outcome::"DecisionOutcome", $1, d.machine, $2, d.tasks, d.reasons::jsonb, d.detail::jsonb
  FROM unnest(${decisionIds}::text[], $17::float8[], $18::text[], $19::text[], $20::int[], $21::text[], $22::text[]) AS d(id, at, outcome, machine, tasks, reasons, detail)
  RETURNING 1
), placed AS (${placed})${more}
SELECT CASE
  WHEN $3::boolean AND $4::bigint > 0 AND NOT EXISTS (SELECT 1 FROM payer) THEN ('${SHORT}:' || (SELECT count(*) FROM payer))::int
  WHEN $3::boolean AND $5::bigint > 0 AND NOT EXISTS (SELECT 1 FROM reserve) THEN ('market-reserve-short:' || (SELECT count(*) FROM reserve))::int
  WHEN NOT EXISTS (SELECT 1 FROM job) THEN ('job-not-in-intake:' || (SELECT count(*) FROM job))::int${refusals}
  END AS refused, (SELECT count(*) FROM placed) AS placed, (SELECT count(*) FROM decisions) AS decisions, (SELECT count(*) FROM postings) AS postings`;

/** The parameters every admission statement takes ($1-$24), and those of an intake after them ($25-$48). */
const PARAMETERS = 24;
const INTAKE_PARAMETERS = 24;
/** How many parameters an admission statement takes, the decision rows' ids last. */
const parameterCount = (intake: boolean) => PARAMETERS + (intake ? INTAKE_PARAMETERS : 0) + 1;
/** The decision rows' ids' placeholder: the last parameter. */
const decisionIdsAt = (intake: boolean) => `$${parameterCount(intake)}`;

/**
 * A placed task queued on its machine (both decisions on a stored job). The ids are matched
 * against the array too, so the rows are found by key whatever the planner's statistics say.
 */
const QUEUE_PLACED = `
  UPDATE "Task" t SET "machineId" = p.machine, status = 'queued'::"TaskStatus"
  FROM unnest($23::text[], $24::text[]) AS p(id, machine) WHERE t.id = p.id AND t.id = ANY($23::text[])
  RETURNING 1`;

/** The decision on a job stored in intake: its row is updated, its placed tasks queued. */
const ADMIT_SQL = admitSql(
  decisionIdsAt(false),
  `
  UPDATE "Job" SET status = $10::"JobStatus", decision = $11::jsonb,
    "submittedAt" = timestamp 'epoch' + $12::float8 * interval '1 millisecond',
    "decidedAt" = timestamp 'epoch' + $12::float8 * interval '1 millisecond',
    "expectedCompletionAt" = timestamp 'epoch' + $13::float8 * interval '1 millisecond',
    "quotedPriceMicro" = $14::bigint, "pilotPriceMicro" = $15::bigint, pricing = $16,
    "escrowMicro" = $4::bigint, "penaltyHeldMicro" = $5::bigint
  WHERE id = $1 AND "decidedAt" IS NULL
  RETURNING 1`,
  QUEUE_PLACED,
);

/**
 * A delayed job's new answer: its row, still delayed, updated as decided (its arrival kept, a
 * pilot price kept unless a new one is set); its placed tasks queued; a rejected job's tasks
 * removed. A job no longer delayed matches nothing, and the statement fails whole (job-not-in-intake).
 */
const SETTLE_DELAYED_SQL = admitSql(
  decisionIdsAt(false),
  `
  UPDATE "Job" SET status = $10::"JobStatus", decision = $11::jsonb,
    "decidedAt" = timestamp 'epoch' + $12::float8 * interval '1 millisecond',
    "expectedCompletionAt" = timestamp 'epoch' + $13::float8 * interval '1 millisecond',
    "quotedPriceMicro" = $14::bigint, "pilotPriceMicro" = COALESCE($15::bigint, "pilotPriceMicro"), pricing = $16,
    "escrowMicro" = $4::bigint, "penaltyHeldMicro" = $5::bigint
  WHERE id = $1 AND status = 'delayed'::"JobStatus"
  RETURNING 1`,
  QUEUE_PLACED,
  `, dropped AS (
  DELETE FROM "Task" WHERE "jobId" = $1 AND $10::"JobStatus" = 'rejected'::"JobStatus" AND EXISTS (SELECT 1 FROM job)
  RETURNING 1
)`,
);

/**
 * The decision on a small job with its intake (Admission.intake): its row inserted as decided,
 * its tasks inserted queued where placed and pending elsewhere, as intake.ts insertTasks writes
 * them. $25-$36 and $48 the job's intake fields, $37-$43 its tasks. The rows are inserted by sibling CTEs
 * of the same statement, so their foreign keys are checked once it has run.
 */
const ADMIT_WITH_INTAKE_SQL = admitSql(
  decisionIdsAt(true),
  `
  INSERT INTO "Job" (id, "ownerId", name, example, "moduleHash", benefit, replicas, status, decision, "taskCount", "workPerTask",
    "declaredWorkPerTask", "workEstimate", "pilotCount", "memoryMbPerTask", "taskLimits", "submittedAt", "decidedAt",
    "expectedCompletionAt", "quotedPriceMicro", "pilotPriceMicro", pricing, "escrowMicro", "penaltyHeldMicro", "nameToProducers")
  VALUES ($1, $2, $25, $26, $27, $28::jsonb, $29::int, $10::"JobStatus", $11::jsonb, $30::int, $31::float8,
    $32::float8, $33, $34::int, $35::int, $36::jsonb, timestamp 'epoch' + $12::float8 * interval '1 millisecond', timestamp 'epoch' + $12::float8 * interval '1 millisecond',
    timestamp 'epoch' + $13::float8 * interval '1 millisecond', $14::bigint, $15::bigint, $16, $4::bigint, $5::bigint, $48::boolean)
  RETURNING 1`,
  `
  INSERT INTO "Task" ("id", "jobId", "index", "replica", "args", "stdin", "env", "files", "status", "machineId", attempts)
  SELECT t.id, $1, t.idx, t.replica, ARRAY(SELECT jsonb_array_elements_text(t.args)), t.stdin, t.env, t.files,
    CASE WHEN l.task IS NOT NULL THEN 'leased'::"TaskStatus" WHEN p.machine IS NULL THEN 'pending'::"TaskStatus" ELSE 'queued'::"TaskStatus" END,
    p.machine, CASE WHEN l.task IS NULL THEN 0 ELSE 1 END
  FROM unnest($37::text[], $38::int[], $39::int[], $40::jsonb[], $41::bytea[], $42::jsonb[], $43::jsonb[]) AS t(id, idx, replica, args, stdin, env, files)
  LEFT JOIN unnest($23::text[], $24::text[]) AS p(id, machine) ON p.id = t.id
  LEFT JOIN unnest($45::text[]) AS l(task) ON l.task = t.id
  WHERE $10::"JobStatus" <> 'rejected'::"JobStatus"
  RETURNING id, status, "machineId"`,
  // Leases made at admission ($44-$46, expiring at $47): the machine is the task's placement. A
  // lease row has no foreign keys (migration 20261126150000_lease_rows_unchecked): each is
  // written only for a task this statement inserted leased on that machine, and the statement
  // fails whole unless every lease was.
  `, leases AS (
  INSERT INTO "Lease" (id, "taskId", "machineId", status, "issuedAt", "expiresAt")
  SELECT l.id, l.task, l.machine, 'active'::"LeaseStatus", timestamp 'epoch' + $12::float8 * interval '1 millisecond', timestamp 'epoch' + $47::float8 * interval '1 millisecond'
  FROM unnest($44::text[], $45::text[], $46::text[]) AS l(id, task, machine)
  JOIN placed p ON p.id = l.task AND p.status = 'leased'::"TaskStatus" AND p."machineId" = l.machine
  RETURNING 1
)`,
  `
  WHEN (SELECT count(*) FROM leases) <> cardinality($44::text[]) THEN ('lease-task-not-inserted:' || (SELECT count(*) FROM leases))::int`,
);

/** Whether `e` is ADMIT_SQL refusing a debit of the consumer's (their balance is below the escrow). */
export const consumerShort = (e: unknown) => e instanceof Error && e.message.includes(SHORT);

/** Writes an admission, delay or rejection with ADMIT_SQL through `run`; throws if a debit cannot happen (consumerShort). */
export async function writeAdmission(run: RunStatement, a: Admission, marketOwner: string): Promise<void> {
  const admitted = a.status === "admitted";
  const placed = [...a.placed];
  const text = (v: unknown) => JSON.stringify(v);
  const intake = a.intake;
  const json = (v: Record<string, string> | null | undefined) => (v ? JSON.stringify(v) : null);
  const intakeValues = intake
    ? [
        intake.name,
        intake.example,
        intake.moduleHash,
        text(intake.benefit),
        intake.replicas,
        intake.taskCount,
        intake.workPerTask,
        intake.declaredWorkPerTask,
        intake.pilotCount === null ? "declared" : "provisional",
        intake.pilotCount,
        intake.memoryMbPerTask,
        intake.taskLimits ? text(intake.taskLimits) : null,
        intake.tasks.map((t) => t.id),
        intake.tasks.map((t) => t.index),
        intake.tasks.map((t) => t.replica),
        intake.tasks.map((t) => JSON.stringify(t.args)),
        intake.tasks.map((t) => t.stdin),
        intake.tasks.map((t) => json(t.env)),
        intake.tasks.map((t) => json(t.files)),
        (a.leases?.rows ?? []).map((l) => l.leaseId),
        (a.leases?.rows ?? []).map((l) => l.taskId),
        (a.leases?.rows ?? []).map((l) => l.machineId),
        a.leases?.expiresAt ?? 0,
        intake.nameToProducers,
      ]
    : [];
  const [name, sql] = intake ? ["admit-job-with-intake", ADMIT_WITH_INTAKE_SQL] : a.wasDelayed ? ["settle-delayed-job", SETTLE_DELAYED_SQL] : ["admit-job", ADMIT_SQL];
  const values = [
    a.jobId,
    a.ownerId,
    admitted,
    String(admitted ? a.escrowMicro : 0n),
    String(admitted ? a.penaltyHeldMicro : 0n),
    marketOwner,
    rowId(),
    rowId(),
    text({ maxBenefitMicro: a.escrowMicro.toString(), penaltyHeldMicro: a.penaltyHeldMicro.toString() }),
    // A job leased at its admission is running already, as a lease statement would have made it.
    intake && a.leases?.rows.length ? "running" : a.status,
    text(a.record),
    a.now,
    a.completionAt,
    a.priceMicro === null ? null : String(a.priceMicro),
    a.pilotPriceMicro === null ? null : String(a.pilotPriceMicro),
    a.pricing,
    a.decisions.map((d) => d.at),
    a.decisions.map((d) => d.outcome),
    a.decisions.map((d) => d.machineId ?? null),
    a.decisions.map((d) => d.tasks ?? 0),
    a.decisions.map((d) => text(d.reasons)),
    a.decisions.map((d) => (d.detail ? text(d.detail) : null)),
    placed.map(([taskId]) => taskId),
    placed.map(([, machineId]) => machineId),
    ...intakeValues,
    a.decisions.map(() => rowId()),
  ];
  // A parameter added without its placeholders moved would shift every one after it.
  if (values.length !== parameterCount(intake !== undefined)) throw new Error(`an admission statement takes ${parameterCount(intake !== undefined)} parameters, not ${values.length}`);
  await run(name, sql, values);
}
