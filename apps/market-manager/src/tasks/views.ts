import type { Reason } from "../market/engine.ts";
import { refuse } from "../api/errors.ts";
import { askOf, type LiveJob, type LiveMachine, type LiveState } from "../market/live.ts";
import { budgetLeft, leaseTermsOf } from "../resources/lease-terms.ts";
import type { Market } from "../market/market.ts";
import { benefitAt, benefitWithoutDowntime, contradictedWork, measuredWorkCharge, settleJob, type RunFailure } from "@cyclemarket/costbenefit";
import type { Db, Prepared } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { prepared } from "../db/sql/runners.ts";
import { jobPage, type FailedRunsRow, type JobPageRow, type PageJob } from "../db/sql/job-page.ts";
import { outputsAt as outputsAtStatement, outputsPage, type OutputRow } from "../db/sql/job-outputs.ts";
import { copyNeedsAnotherMachine, replicaShortfall } from "../market/replicas.ts";
import { toCredits } from "../ledger/ledger.ts";
import { downtimeDuring } from "../ledger/settlement.ts";
import { priceAtWorkOf } from "../ledger/price-at-work.ts";
import { Reasons, chargeReasons, jobFailure, runFailures, storedDecision } from "./stored-reasons.ts";

// What the API shows of jobs: plain JSON (instants in milliseconds since the epoch, as in the
// decisions; credits as numbers for display); the exact integer amounts stay in the ledger.

const MICRO = 1_000_000;
export const credits = (micro: bigint | null | undefined) => (micro == null ? null : Number(micro) / MICRO);
const ms = (d: Date | null | undefined) => (d ? d.getTime() : null);

export async function jobSummaries(db: Db, where: { ownerId?: string; partOf?: null }) {
  const jobs = await db.job.findMany({
    where,
    orderBy: { submittedAt: "desc" },
    take: 200,
    include: { owner: { select: { email: true } } },
  });
  return jobs.map((j) => ({
    id: j.id,
    name: j.name,
    owner: j.owner.email,
    example: j.example,
    status: j.status,
    taskCount: j.taskCount,
    tasksDone: j.tasksDone,
    submittedAt: j.submittedAt.getTime(),
    completedAt: ms(j.completedAt),
    quotedPrice: credits(j.quotedPriceMicro),
    charged: credits(j.chargedMicro),
  }));
}

/**
 * A task's failed runs: their failure codes (a trap, a limit, `exit:N`), how many there were, and
 * how many a machine of another owner reproduced (those, and only those, are the program's: paid
 * and counted towards the job's failure limit). `status` is the task's now (it may have succeeded
 * on a run after an unconfirmed failure).
 */
export interface FailedRuns extends Omit<FailedRunsRow, "codes"> {
  codes: RunFailure[];
}

/** What a job's page shows, read in one statement (db/sql/job-page.ts). */
async function jobPageRow(reads: Prepared, jobId: string): Promise<JobPageRow> {
  const [row] = await runStatement(prepared(reads), jobPage, { jobId });
  return row!;
}

const micro = (text: string | null) => (text === null ? null : BigInt(text));

/** A job's page: its row and the rest, read in one statement (jobPageRow). */
export async function jobView(market: Market, jobId: string) {
  const { db, state } = market;
  const page = await jobPageRow(market.resources.database.reads, jobId);
  const j = page.job;
  if (!j) throw refuse.notFound("job");
  const counts = page.counts;
  const escrow = BigInt(page.escrow ?? 0);
  const [waiting, verified] = await Promise.all([
    waitingForMachines(market, j.id, (counts.queued ?? 0) + (counts.pending ?? 0)),
    j.replicas > 1 ? verification(db, j.id, j.replicas) : null,
  ]);
  const estimated = estimate(market, j, BigInt(page.paid));
  return {
    id: j.id,
    name: j.name,
    example: j.example,
    status: j.status,
    benefit: j.benefit,
    decision: storedDecision(j.decision),
    replicas: j.replicas,
    taskCount: j.taskCount,
    tasksDone: j.tasksDone,
    tasks: {
      pending: counts.pending ?? 0,
      queued: counts.queued ?? 0,
      leased: counts.leased ?? 0,
      done: counts.done ?? 0,
      failed: counts.failed ?? 0,
    },
    workPerTask: j.workPerTask,
    workEstimate: workEstimateOf(j),
    submittedAt: j.submittedAt,
    decidedAt: j.decidedAt,
    expectedCompletionAt: j.expectedCompletionAt,
    completedAt: j.completedAt,
    quotedPrice: credits(micro(j.quotedPriceMicro)),
    pricing: j.pricing === "bid" ? ("bid" as const) : ("posted" as const),
    charged: credits(micro(j.chargedMicro)),
    /** The most the consumer allowed it to be charged (the quote unless they set maxSpend). */
    maxSpend: credits(micro(j.maxSpendMicro) ?? micro(j.quotedPriceMicro)),
    /** Why it was charged what it was, once settled: the engine's charge reasons. */
    chargeReasons: chargeReasons(page.settlement?.terms),
    /** What the job's escrow account holds now: what it can still be charged while it runs, else 0. */
    escrowHeld: credits(escrow)!,
    waiting,
    result: j.result,
    /** Why it failed, when it did: the reason its result stores. */
    failure: jobFailure(j.result),
    machines: page.machines,
    verification: verified,
    /** The tasks with failed runs (the first by index) and what failed; `failureLimit` confirmed failures stop the job. */
    failures: { tasks: page.failures.map((f) => ({ ...f, codes: runFailures(f.codes) })), failureLimit: market.settings.terms.confirmedFailureLimit },
    estimate: estimated,
    /** A delayed job is given up at this time if the market still cannot run it. */
    givesUpAt: j.status === "delayed" ? j.submittedAt + market.settings.maxDelayMs : null,
  };
}

/**
 * Where the work per task the market plans with comes from: the consumer's own estimate
 * ("declared"), the pilots' upper bound while they run ("provisional"), or the pilots' measured
 * work once the rest is planned from it ("measured").
 */
function workEstimateOf(j: PageJob) {
  const pilots = j.pilotCount ?? 0;
  if (j.workEstimate === "provisional") return { kind: "provisional" as const, pilots, workPerTask: j.workPerTask };
  if (j.workEstimate === "measured") return { kind: "measured" as const, pilots, workPerTask: j.declaredWorkPerTask ?? j.workPerTask };
  return { kind: "declared" as const, pilots: 0, workPerTask: j.declaredWorkPerTask ?? j.workPerTask };
}

/**
 * While a job runs: when it will complete at the pace its tasks have been finishing (the plan's
 * time until the first finishes), and what it would be charged if it completed now, by the
 * engine's settlement rule (so the page and the ledger never disagree).
 */
function estimate(market: Market, j: PageJob, paid: bigint) {
  if (j.status !== "admitted" && j.status !== "running") return null;
  const t = market.settings.terms;
  const now = market.clock.now();
  const started = j.decidedAt ?? j.submittedAt;
  const planned = j.expectedCompletionAt;
  const paced = j.tasksDone > 0 ? started + ((now - started) * j.taskCount) / j.tasksDone : null;
  const took = (now - j.submittedAt) / 1000;
  const price = toCredits(micro(j.quotedPriceMicro) ?? 0n);
  const declared = j.declaredWorkPerTask ?? j.workPerTask;
  const pricing = j.pricing === "bid" ? "bid" : "posted";
  const measured = contradictedWork(t, { pricing, declaredWork: declared, samples: j.workSamples });
  const c = settleJob({
    pricing,
    price,
    maxSpend: toCredits(micro(j.maxSpendMicro) ?? micro(j.quotedPriceMicro) ?? 0n),
    benefit: benefitAt(j.benefit, took),
    benefitWithoutDowntime: benefitWithoutDowntime(j.benefit, { took, down: downtimeDuring(market, j.submittedAt, now), planned: planned === null ? undefined : (planned - j.submittedAt) / 1000 }),
    contradicted: measured === undefined ? null : { charge: measuredWorkCharge({ price, declaredWork: declared, priceAtWork: priceAtWorkOf(j.decision) }, measured) },
    held: [],
  });
  return {
    completionAt: paced !== null ? Math.max(paced, now) : (planned ?? now),
    basis: paced !== null ? ("measured-pace" as const) : ("plan" as const),
    chargeIfNow: c.charge,
    paidToProducers: toCredits(paid),
  };
}

/**
 * How independent the agreement behind the job's results is: copies of a task run on machines of
 * different owners, and this says how many owners agreed on each verified task (the fewest of them).
 */
async function verification(db: Db, jobId: string, replicas: number) {
  const agreed = await db.task.groupBy({ by: ["agreedOwners"], where: { jobId, replica: 0, agreedOwners: { not: null } }, _count: { _all: true } });
  const owners = agreed.map((a) => a.agreedOwners!);
  return {
    replicas,
    quorum: Math.floor(replicas / 2) + 1,
    tasksVerified: agreed.reduce((n, a) => n + a._count._all, 0),
    fewestOwnersAgreeing: owners.length ? Math.min(...owners) : null,
  };
}

const MAX_WAITING_REASONS = 20;

/**
 * Why the job's tasks wait for machines, read from the live market: every connected machine asks
 * more for a task than the job's escrow has left, a delayed job asks for more copies than there
 * are owners with machines, or copies that every connected machine is barred from because its
 * owner ran another copy of the same task. The first few reasons, and how many there are.
 */
async function waitingForMachines(market: Market, jobId: string, waitingCopies: number) {
  const { db, state } = market;
  const job = state.jobs.get(jobId);
  const none = { total: 0, reasons: [] as Reason[] };
  if (!job) return none;
  const short = budgetShort(market, job, waitingCopies);
  const replicas = job.replicas < 2 ? [] : await copiesWaiting(db, state, job, waitingCopies);
  const reasons = short ? [short, ...replicas] : replicas;
  return { total: reasons.length, reasons: Reasons.parse(reasons.slice(0, MAX_WAITING_REASONS)) };
}

/** Copies of a replicated job that wait for a machine of another owner (or a delayed job's shortfall of owners). */
async function copiesWaiting(db: Db, state: LiveState, job: LiveJob, waitingCopies: number): Promise<Reason[]> {
  if (job.status === "delayed") {
    const shortfall = replicaShortfall(state, job.replicas);
    return shortfall ? [shortfall] : [];
  }
  // A copy is barred only from the owners that ran one of its k - 1 siblings: with k owners or
  // more connected, some machine can always take it.
  if (waitingCopies === 0 || new Set([...state.machines.values()].map((m) => m.ownerId)).size >= job.replicas) return [];
  const open = await db.task.findMany({ where: { jobId: job.id, status: { in: ["queued", "pending"] } }, orderBy: [{ index: "asc" }, { replica: "asc" }], select: { id: true } });
  return open.flatMap(({ id }) => {
    const task = state.tasks.get(id);
    const reason = task && copyNeedsAnotherMachine(state, task);
    return reason ? [reason] : [];
  });
}

/**
 * Tasks of a running job that no connected machine may lease for want of budget: the cheapest
 * machine asks more for a task than the job's budget (lease-terms.ts budgetLeft: what it can be
 * charged) has left beyond what it paid, holds for late runs and promised to live leases (leases.ts
 * withinBudget refuses such a lease), so they wait for
 * a machine that asks less. Null when some machine's piece fits, or nothing waits.
 */
function budgetShort(market: Market, job: LiveJob, waitingCopies: number): Reason | null {
  const { state } = market;
  if (waitingCopies === 0 || (job.status !== "admitted" && job.status !== "running")) return null;
  let cheapest: LiveMachine | null = null;
  for (const m of state.machines.values()) {
    // A dedicated machine is paid by its contract: its pieces cost the job nothing.
    if (m.kind === "dedicated") return null;
    if (!cheapest || askOf(m) < askOf(cheapest)) cheapest = m;
  }
  if (!cheapest) return null;
  const pilot = job.pilots?.phase === "provisional";
  const piece = leaseTermsOf(market, cheapest, job, pilot, 0, market.clock.now()).pieceRateMicro;
  const left = budgetLeft(market, job);
  if (piece === 0n || piece <= left) return null;
  return { code: "budget-short", tasks: waitingCopies, left: toCredits(left > 0n ? left : 0n), cheapestPiece: toCredits(piece), machinesConnected: state.machines.size };
}

/** Bytes of stdout and stderr one page of outputs carries at most (at least one task is always sent). */
export const OUTPUT_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Finished tasks' accepted outputs in index order, as bytes: one row per task, once a quorum of
 * its copies agreed (all agreeing copies are accepted and identical; the lowest copy stands for
 * them). A page stops at `limit` tasks or `maxBytes` of output, whichever comes first.
 */
export async function acceptedOutputs(reads: Prepared, jobId: string, fromIndex: number, limit: number, maxBytes = OUTPUT_PAGE_BYTES): Promise<TaskOutput[]> {
  const rows = await runStatement(prepared(reads), outputsPage, { jobId, fromIndex, limit, maxBytes: Number.isFinite(maxBytes) ? maxBytes : null });
  return outputsFrom(rows);
}

const outputsFrom = (rows: OutputRow[]): TaskOutput[] => rows.map((r) => ({ ...r, stdout: Buffer.from(r.stdout), stderr: Buffer.from(r.stderr) }));

/** One task's accepted output. */
export interface TaskOutput {
  index: number;
  args: string[];
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  outputHash: string;
  elapsedMs: number;
  machineId: string;
  machineName: string;
}

/** The accepted outputs of a job's tasks at `indices`, in index order (tasks not yet accepted left out). */
export async function outputsAt(reads: Prepared, jobId: string, indices: number[]): Promise<TaskOutput[]> {
  const rows = await runStatement(prepared(reads), outputsAtStatement, { jobId, indices });
  return outputsFrom(rows);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The output as text when it is text (UTF-8 without control bytes but tab and newlines), else null. */
export function asText(bytes: Buffer): string | null {
  if (bytes.some((b) => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d)) return null;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * The API's view of outputs: bytes travel as base64 beside their SHA-256, so binary output
 * (compressed data, images, numeric arrays) arrives byte for byte; text outputs come as text too.
 */
export async function jobOutputs(reads: Prepared, jobId: string, fromIndex: number, limit: number) {
  return (await acceptedOutputs(reads, jobId, fromIndex, limit)).map(outputView);
}

/** One accepted output as the API sends it (jobs.outputs and the results stream alike). */
export function outputView({ stdout, stderr, ...r }: TaskOutput) {
  return {
    ...r,
    bytes: stdout.length,
    stdoutBase64: stdout.toString("base64"),
    stdoutText: asText(stdout),
    stderrBase64: stderr.toString("base64"),
  };
}
