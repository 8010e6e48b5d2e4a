import type { Market } from "../market/market.ts";
import type { Tx } from "../ledger/ledger.ts";
import { settleJob, type WorkSample } from "@cyclemarket/costbenefit";
import { storedMs, type Completion, type CompletionStep } from "./results.ts";
import { completedEntry, completedInput, downtimeDuring } from "../ledger/settlement.ts";
import { groupPayment, type Entry, type GroupPiece } from "../ledger/entries.ts";
import { ledgerParams } from "../db/sql/ledger-rows.ts";
import { plainReports } from "../db/sql/plain-reports.ts";
import { runStatement, type Runner } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { machineChanged } from "../market/transitions.ts";
import { countedOutputs } from "./examples.ts";

export interface PlainRow {
  c: Completion;
  now: number;
  agreedOwners: number;
  /** The run's piece, paid from the job's escrow in full (on its result; dedicated machines are paid by their contract: 0). */
  amount: bigint;
  /** Who the piece is paid to, with the group's other pieces of the job to the same producer (`groupPayments`); null: nobody (dedicated). */
  producerId: string | null;
  /** The work sample and speed it measured, already in memory (`undo` takes them back). */
  sample: WorkSample | null;
  speed: number | null;
  undo: () => void;
  /** The job's settlement, when this run decides its last task. */
  settle: PlainSettlement | null;
}

/** A completed job's settlement as a group's statement writes it (ledger/settlement.ts completedEntry). */
export interface PlainSettlement {
  entry: Entry;
  charged: bigint;
  result: string;
}

/** Runs one statement: through a transaction of Prisma's, or straight through the journal's connection. */
export type RunStatement = Runner;

/**
 * A report as a plain row, or null when it is not one (results.ts `plain`: a successful run on
 * time that decides a task without copies and establishes no standing fact), or when memory cannot
 * vouch for its money: the escrow beyond its held pieces cannot cover the
 * piece, or the job would be settled with held
 * pieces or across the market's downtime (those are read from the ledger: a transaction writes
 * them). Its measurements move memory now (`undo` takes them back); the caller counts the row
 * (step.count with `paidBy`) before taking the next one.
 */
export function plainRow(market: Market, c: Completion, step: CompletionStep): PlainRow | null {
  const plain = step.plain;
  const m = c.machine;
  if (!plain) return null;
  const job = plain.job;
  const amount = m.kind === "opportunistic" ? plain.pieceMicro : 0n;
  if (job.escrowMicro - job.paidMicro - job.heldMicro < amount) return null;
  if (plain.settles && (job.heldMicro !== 0n || downtimeDuring(market, job.arrivedAt, plain.now) > 0)) return null;
  const producerId = m.kind === "opportunistic" ? m.ownerId : null;
  // What the run measured, in memory now: later reports of the group see it.
  const before = { samples: job.workSamples.length, work: job.workPerTask, speed: m.speed };
  const measure = plain.measure;
  if (measure?.sample != null) job.workSamples.push(measure.sample);
  if (measure) job.workPerTask = measure.workPerTask;
  if (measure?.speed != null) m.speed = measure.speed;
  const undo = () => {
    job.workSamples.length = before.samples;
    job.workPerTask = before.work;
    m.speed = before.speed;
  };
  let settle: PlainSettlement | null = null;
  if (plain.settles) {
    const inEscrow = job.escrowMicro - job.paidMicro - amount;
    const input = completedInput(market, job, plain.now, []);
    const { entry: settled, charged } = completedEntry(job, inEscrow, settleJob(input), input.took);
    settle = { entry: settled, charged, result: JSON.stringify(countedOutputs(job.taskCount)) };
  }
  return { c, now: plain.now, agreedOwners: plain.agreedOwners, amount, producerId, sample: measure?.sample ?? null, speed: measure?.speed ?? null, undo, settle };
}

/** What a row pays its producer out of the job's escrow. */
export const paidBy = (row: PlainRow) => row.amount;

/**
 * The rows of a transaction's plain reports, written for the whole group in one statement (the
 * rows completeTask writes one by one, many to a statement). Any other report is written alone by
 * completeTask's own `write`, after `flush` has written the plain rows before it, so it sees the
 * escrow and the job as they are.
 */
export class PlainRows {
  private rows: PlainRow[] = [];

  constructor(
    private market: Market,
    private tx: Tx,
  ) {}

  /** Takes the report as a plain row and returns it, or null: the caller writes it alone (after `flush`). */
  take(c: Completion, step: CompletionStep): PlainRow | null {
    const row = plainRow(this.market, c, step);
    if (row) this.rows.push(row);
    return row;
  }

  async flush() {
    const rows = this.rows;
    this.rows = [];
    if (rows.length) await writePlainRows(this.market, viaPrisma(this.tx), rows);
  }
}

/** Memory once a group's rows committed: the machines whose speed they measured, as the engine sees them. */
export function plainRowsApplied(market: Market, rows: readonly PlainRow[]) {
  const changed = new Set(rows.filter((r) => r.speed !== null).map((r) => r.c.machine));
  for (const m of changed) machineChanged(market, m);
}

/**
 * The group's payments: one entry per job and producer, the sum of its rows' pieces (entries.ts
 * `groupPayment`). Each row's own piece is written on its result.
 */
export function groupPayments(rows: readonly PlainRow[]): Entry[] {
  const byJobAndProducer = new Map<string, { jobId: string; producerId: string; pieces: GroupPiece[] }>();
  for (const r of rows) {
    if (r.producerId === null) continue;
    const key = `${r.c.task.jobId}\n${r.producerId}`;
    const g = byJobAndProducer.get(key) ?? { jobId: r.c.task.jobId, producerId: r.producerId, pieces: [] };
    g.pieces.push({ machineId: r.c.machine.id, amount: r.amount });
    byJobAndProducer.set(key, g);
  }
  return [...byJobAndProducer.values()].filter((g) => g.pieces.some((x) => x.amount !== 0n)).map(groupPayment);
}

/** Writes `rows` with the plain-reports statement through `run`. */
export async function writePlainRows(market: Market, run: RunStatement, rows: PlainRow[]) {
  const done = new Map<string, number>();
  const samples = new Map<string, WorkSample[]>();
  for (const r of rows) {
    const jobId = r.c.task.jobId;
    done.set(jobId, (done.get(jobId) ?? 0) + 1);
    if (r.sample !== null) samples.set(jobId, [...(samples.get(jobId) ?? []), r.sample]);
  }
  const jobIds = [...done.keys()];
  const settled = rows.filter((r): r is PlainRow & { settle: PlainSettlement } => r.settle !== null);
  const speeds = new Map<string, number>();
  for (const r of rows) if (r.speed !== null) speeds.set(r.c.machine.id, r.speed);
  const entries = [...groupPayments(rows), ...settled.map((r) => r.settle.entry)];
  await runStatement(run, plainReports, {
    taskIds: rows.map((r) => r.c.task.id),
    leaseIds: rows.map((r) => r.c.lease.id),
    machineIds: rows.map((r) => r.c.machine.id),
    exitCodes: rows.map((r) => r.c.report.exitCode),
    stdouts: rows.map((r) => r.c.stdout.toString("base64")),
    stderrs: rows.map((r) => r.c.stderr.toString("base64")),
    hashes: rows.map((r) => r.c.hash),
    elapsedMs: rows.map((r) => storedMs(r.c.report.elapsedMs)),
    paid: rows.map((r) => String(r.amount)),
    at: rows.map((r) => r.now),
    agreedOwners: rows.map((r) => r.agreedOwners),
    jobIds,
    jobDone: jobIds.map((id) => done.get(id)!),
    jobWork: jobIds.map((id) => (samples.has(id) ? (market.state.jobs.get(id)?.workPerTask ?? null) : null)),
    jobSamples: jobIds.map((id) => JSON.stringify(samples.get(id) ?? [])),
    settledJobs: settled.map((r) => r.c.task.jobId),
    settledCharged: settled.map((r) => String(r.settle.charged)),
    settledAt: settled.map((r) => r.now),
    settledResults: settled.map((r) => r.settle.result),
    speedMachines: [...speeds.keys()],
    speeds: [...speeds.values()],
    ...ledgerParams(entries),
  });
}
