import type { DecisionEntry } from "../ops/decisions.ts";
import type { NewTask } from "./intake.ts";
import type { LeaseTerms } from "../resources/lease-terms.ts";
import { rowId } from "../db/row-id.ts";
import { runStatement, type Runner as RunStatement } from "../db/sql/statement.ts";
import { ledgerParams } from "../db/sql/ledger-rows.ts";
import { admitJob, admitJobWithIntake, settleDelayedJob, type AdmissionParams } from "../db/sql/admit-job.ts";
import { escrow } from "../ledger/entries.ts";

// A submission's decision made durable in one statement (db/sql/admit-job.ts), on the market's
// lock: the job's row (stored in intake before the lock, or for a small job inserted here with its
// tasks), its decision log rows, the escrow entry with its postings and accounts, and the tasks
// placed on machines. One statement is one transaction: it is all written or none of it (a kill -9 leaves
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
  /** The most the consumer allows when the measured work contradicts the estimate (null: the price). */
  maxSpendMicro: bigint | null;
  /** The network the job was submitted from, where known. */
  submitNetwork: string | null;
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
  leases?: { rows: { leaseId: string; taskId: string; machineId: string; terms: LeaseTerms }[] };
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
  /** The Market Manager that took the submission, which the job belongs to (market/managers.ts). */
  managerId: string;
  /** A part of a split job: the whole, and where its tasks start in it (tasks/split.ts). */
  partOf?: string | null;
  taskOffset?: number;
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

/** Writes an admission, delay or rejection in one statement through `run`; throws FloorCrossed when the consumer's balance cannot cover the escrow. */
export async function writeAdmission(run: RunStatement, a: Admission): Promise<void> {
  const admitted = a.status === "admitted";
  const text = (v: unknown) => JSON.stringify(v);
  const intake = a.intake;
  const json = (v: Record<string, string> | null | undefined) => (v ? JSON.stringify(v) : null);
  const placed = [...a.placed];
  const base: AdmissionParams = {
    ...ledgerParams(admitted && a.escrowMicro > 0n ? [escrow({ jobId: a.jobId, consumerId: a.ownerId, amount: a.escrowMicro })] : []),
    jobId: a.jobId,
    ownerId: a.ownerId,
    // A job leased at its admission is running already, as a lease statement would have made it.
    status: intake && a.leases?.rows.length ? "running" : a.status,
    decision: text(a.record),
    now: a.now,
    completionAt: a.completionAt,
    price: a.priceMicro === null ? null : String(a.priceMicro),
    pilotPrice: a.pilotPriceMicro === null ? null : String(a.pilotPriceMicro),
    pricing: a.pricing,
    escrow: String(admitted ? a.escrowMicro : 0n),
    maxSpend: a.maxSpendMicro === null ? null : String(a.maxSpendMicro),
    submitNetwork: a.submitNetwork,
    decisionIds: a.decisions.map(() => rowId()),
    decisionAt: a.decisions.map((d) => d.at),
    decisionOutcomes: a.decisions.map((d) => d.outcome),
    decisionMachines: a.decisions.map((d) => d.machineId ?? null),
    decisionTasks: a.decisions.map((d) => d.tasks ?? 0),
    decisionReasons: a.decisions.map((d) => text(d.reasons)),
    decisionDetails: a.decisions.map((d) => (d.detail ? text(d.detail) : null)),
    placedTasks: placed.map(([taskId]) => taskId),
    placedMachines: placed.map(([, machineId]) => machineId),
  };
  if (!intake) {
    await runStatement(run, a.wasDelayed ? settleDelayedJob : admitJob, base);
    return;
  }
  const leases = a.leases?.rows ?? [];
  await runStatement(run, admitJobWithIntake, {
    ...base,
    name: intake.name,
    example: intake.example,
    moduleHash: intake.moduleHash,
    benefit: text(intake.benefit),
    replicas: intake.replicas,
    taskCount: intake.taskCount,
    workPerTask: intake.workPerTask,
    declaredWorkPerTask: intake.declaredWorkPerTask,
    workEstimate: intake.pilotCount === null ? "declared" : "provisional",
    pilotCount: intake.pilotCount,
    memoryMbPerTask: intake.memoryMbPerTask,
    taskLimits: intake.taskLimits ? text(intake.taskLimits) : null,
    nameToProducers: intake.nameToProducers,
    managerId: intake.managerId,
    partOf: intake.partOf ?? null,
    taskOffset: intake.taskOffset ?? 0,
    taskIds: intake.tasks.map((t) => t.id),
    taskIndexes: intake.tasks.map((t) => t.index),
    taskReplicas: intake.tasks.map((t) => t.replica),
    taskArgs: intake.tasks.map((t) => JSON.stringify(t.args)),
    taskStdins: intake.tasks.map((t) => t.stdin),
    taskEnvs: intake.tasks.map((t) => json(t.env)),
    taskFiles: intake.tasks.map((t) => json(t.files)),
    leaseIds: leases.map((l) => l.leaseId),
    leaseTasks: leases.map((l) => l.taskId),
    leaseMachines: leases.map((l) => l.machineId),
    leaseExpires: leases.map((l) => l.terms.expiresAt),
    leasePieces: leases.map((l) => String(l.terms.pieceRateMicro)),
    leasePilots: leases.map((l) => l.terms.pilot),
    leaseAhead: leases.map((l) => l.terms.ahead),
  });
}
