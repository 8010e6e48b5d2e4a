import { LRUCache } from "lru-cache";
import { setImmediate as letCallsIn } from "node:timers/promises";
import { countDecisions, jobDecisionEntries } from "../ops/decisions.ts";
import { opsOf } from "../ops/ops.ts";
import { BenefitCurve, maxBenefit, minBenefit, penaltyHold, pilotCount, provisionalWork, runPay } from "@cyclemarket/costbenefit";
import { leaseLimits } from "../resources/leases.ts";
import type { Caller } from "../api/trpc.ts";
import { refuse } from "../api/errors.ts";
import type { Market } from "../market/market.ts";
import { demandOf, type Decision, type JobSpec, type Reason, type TickDecision } from "../market/engine.ts";
import { replicaShortfall } from "../market/replicas.ts";
import { replicaId } from "../market/live.ts";
import { decisionUndone, delayedJobAdmitted, delayedJobRejected, jobDecided, jobStillDelayed } from "../market/transitions.ts";
import { toBytes, toJson, type Db } from "../db/client.ts";
import { balance, MARKET_OWNER, spendable, toCredits, toMicro } from "../ledger/ledger.ts";
import { requireStoredModule } from "./job-request.ts";
import { INTAKE, discardIntake, holdIntake, insertTasks, type NewTask } from "./intake.ts";
import { headOf, prepareSubmission, rowsOf, type PreparedJob, type SubmissionHead, type SubmitJob } from "./submission.ts";
import { StagedSubmission } from "./intake-pool.ts";
import { consumerShort, INLINE_INTAKE_TASKS, writeAdmission, type Admission, type InlineIntake } from "./admission.ts";
import { inOrder } from "./report-batch.ts";
import { applyAdmissionLeases, dropAdmissionLeases, planAdmissionLeases } from "./admission-leases.ts";
import { rowId } from "../db/row-id.ts";
import { shortId } from "@cyclemarket/client/job-file";

export { MAX_TASKS, SubmitJob, JobSource } from "./submission.ts";

/**
 * What admission puts in escrow. Pay-as-bid: the curve's highest benefit, the most the consumer
 * can be charged. Posted price: the quoted price plus a contingency for runs that take longer than
 * planned or fail: each placement's task run `maxAttempts` times, each paid at the engine's cap
 * (`runPay` with an unbounded report), instead of once at its expected time. Never more than the
 * highest benefit; what is not used comes back at settlement.
 */
export function escrowFor(market: Market, benefit: BenefitCurve, d: Decision & { outcome: "admitted" }, pricing: "posted" | "bid", workPerTask: number, wallMs: number): bigint {
  const highest = Math.max(0, maxBenefit(benefit));
  if (pricing === "bid") return toMicro(highest);
  let contingency = 0;
  // The same on every placement on one machine: worked out once per machine, times its count.
  const perMachine = new Map<string, number>();
  for (const p of d.placements) perMachine.set(p.machineId, (perMachine.get(p.machineId) ?? 0) + 1);
  for (const [machineId, count] of perMachine) {
    const m = market.state.machines.get(machineId);
    if (!m || m.kind !== "opportunistic") continue;
    const run = { workPerTask, speed: m.speed, pricePerSecond: toCredits(m.pricePerSecondMicro), wallSeconds: wallMs / 1000, escrowLeft: Infinity };
    // A report longer than any cap: what the engine pays a run at most on this machine.
    const most = runPay(market.settings.terms, { ...run, reportedSeconds: Number.MAX_VALUE }).amount;
    const expected = runPay(market.settings.terms, { ...run, reportedSeconds: workPerTask / m.speed }).amount;
    contingency += count * Math.max(0, market.settings.maxAttempts * most - expected);
  }
  return toMicro(Math.min(highest, d.price + contingency));
}

function refuseBalance(held: bigint, needed: bigint) {
  return refuse.badRequest(
    { code: "insufficient-credits", balance: toCredits(held), needed: toCredits(needed) },
    `The job needs ${toCredits(needed)} credits in escrow (its price and a contingency for runs that take longer) and your balance is ${toCredits(held)} credits.`,
  );
}

/** What the market holds beside a job admitted at a price (credits): nothing for a curve that cannot go negative. */
type PenaltyHold = (price: number) => bigint;
const NO_PENALTY: PenaltyHold = () => 0n;

/**
 * The market's side of a curve that can go negative: the engine's `penaltyHold` (at most the
 * job's price), as far as the market's reserve covers it now (read here, before the decision,
 * on the lock). The penalty paid is never more than what is held.
 */
async function penaltyHolder(db: Db, benefit: BenefitCurve): Promise<PenaltyHold> {
  const lowest = minBenefit(benefit);
  if (lowest >= 0) return NO_PENALTY;
  const can = await spendable(db, { kind: "market" });
  return (price) => {
    const wanted = toMicro(penaltyHold(lowest, price));
    return wanted < can ? wanted : can;
  };
}

/**
 * What the consumer is told of the money beside the price: runs that fail are paid for and
 * charged, a task is tried at most `maxAttempts` times, a run is paid at most `payCapMultiple`
 * times its expected time, and a lateness penalty is at most the price and void when the
 * consumer's own work estimate proves wrong.
 */
function termsOf(market: Market, benefit: BenefitCurve, price: number | null) {
  const t = market.settings.terms;
  const negative = minBenefit(benefit) < 0;
  return {
    pricing: market.adminSettings.pricing,
    feeFraction: market.adminSettings.feeFraction,
    failedRunsCharged: true,
    maxAttempts: market.settings.maxAttempts,
    payCapMultiple: t.payCapMultiple,
    payFloorSeconds: t.payFloorSeconds,
    penaltyCap: negative && price !== null ? penaltyHold(minBenefit(benefit), price) : null,
    penaltyVoidIfWorkOver: negative ? t.estimateToleranceMultiple : null,
  };
}

/**
 * A submission as the procedures hand it over: checked on the market's thread (a call made in
 * the process), or parsed and expanded by an intake thread (a request over HTTP, intake-pool.ts).
 */
export type Submission = SubmitJob | StagedSubmission;

/** How many tasks a submission asks for (before replicas). */
export const tasksIn = (s: Submission) =>
  s instanceof StagedSubmission ? s.job.tasks.length : s.source.kind === "example" ? s.source.taskCount : s.source.tasks.length;

interface Intake {
  head: SubmissionHead;
  job: PreparedJob;
  /** Stores every copy of every task of the job `jobId` (its row stored first, in intake). */
  writeTasks(jobId: string): Promise<void>;
  /** Lets the tasks' inputs go when the job is refused before they are stored. */
  discard(): void;
  /** Every copy of every task as stored, for a submission read on the market's thread (null: staged in an intake thread). */
  rows: (() => NewTask[]) | null;
}

async function prepare(db: Db, submission: Submission, maxModuleBytes: number): Promise<Intake> {
  if (submission instanceof StagedSubmission) {
    const { head, job } = submission;
    try {
      if (head.source.kind === "module") await requireStoredModule(db, job.moduleHash);
    } catch (e) {
      submission.drop();
      throw e;
    }
    return { head, job, writeTasks: (jobId) => submission.store(jobId, head.replicas), discard: () => submission.drop(), rows: null };
  }
  const { job, inputs } = prepareSubmission(submission, maxModuleBytes);
  if (submission.source.kind === "module") await requireStoredModule(db, job.moduleHash);
  const head = headOf(submission);
  const rows = () => rowsOf(job.tasks, inputs, head.replicas);
  return { head, job, writeTasks: (jobId) => insertTasks(db, jobId, rows()), discard: () => {}, rows };
}

/** How many of the job's first tasks run as pilots: null when the consumer gave a work estimate. */
const pilotsOf = (job: PreparedJob) => (job.workPerTask === undefined ? pilotCount(job.tasks.length) : null);

/** The work the market plans with: the consumer's estimate, or the pilots' provisional upper bound. */
const plannedWork = (job: PreparedJob) => job.workPerTask ?? provisionalWork(leaseLimits(job.taskLimits).wallMs / 1000);

function specOf(jobId: string, arrivedAt: number, job: PreparedJob, benefit: BenefitCurve, replicas: number): JobSpec {
  const work = plannedWork(job);
  return {
    id: jobId,
    arrivedAt,
    benefit,
    replicas,
    tasks: job.tasks.map((t) => ({ id: t.id, work, memoryMb: job.memoryMbPerTask, bytes: t.bytes })),
  };
}

/** Every copy of every task: replica r of task t has the id the engine gives it (replicaId). */
function copiesOf(job: PreparedJob, replicas: number) {
  return job.tasks.flatMap((task, index) => Array.from({ length: replicas }, (_, replica) => ({ id: replicaId(task.id, replica), index, replica, bytes: task.bytes })));
}

/**
 * The decision as the consumer is told it. A job not admitted because it asks for more copies
 * per task than there are machines says so in those numbers, beside the engine's own reasons.
 */
export function decisionRecord(market: Market, d: Decision, replicas: number, benefit: BenefitCurve, pilots: number | null = null) {
  // A job without a work estimate: the decision and its price are the pilots' (provisional).
  const provisional = { provisional: pilots !== null, pilots };
  const shortfall = d.outcome === "admitted" ? null : replicaShortfall(market.state, replicas);
  const reasons: Reason[] = shortfall ? [...d.reasons, shortfall] : d.reasons;
  return d.outcome === "admitted"
    ? {
        outcome: d.outcome,
        reasons,
        completionAt: d.completionAt,
        price: d.price,
        priceParts: d.priceParts ?? null,
        terms: termsOf(market, benefit, d.price),
        ...provisional,
      }
    : { outcome: d.outcome, reasons, terms: termsOf(market, benefit, null), ...provisional };
}

/** What the market would decide now, committing nothing: the consumer's quote. */
export async function quoteJob(market: Market, submission: Submission, maxModuleBytes: number) {
  const { head: input, job, discard } = await prepare(market.db, submission, maxModuleBytes);
  discard();
  const now = market.clock.now();
  const pilots = pilotsOf(job);
  // Decided from memory alone (the engine counts the load of decisions still being written): no statement to wait for.
  return market.pipelined(() => {
    const spec = specOf("quote", now, job, input.benefit, input.replicas);
    const d = pilots === null ? market.engine.quote(spec, now) : market.engine.decidePilots(spec, leaseLimits(job.taskLimits).wallMs, now, true);
    return decisionRecord(market, d, input.replicas, input.benefit, pilots);
  });
}

/**
 * The Task Manager takes the job; the engine decides; the decision is stored before it is told.
 * The job's row and tasks are stored first, in chunks and outside the market's lock (intake.ts);
 * inside it the engine decides and the decision, escrow and placements are written.
 */
export async function submitJob(market: Market, caller: Caller, submission: Submission, maxModuleBytes: number) {
  const intake = await prepare(market.db, submission, maxModuleBytes);
  const { head: input, job } = intake;
  const jobId = rowId();
  const copies = copiesOf(job, input.replicas);
  const release = holdIntake(market, caller.id, copies.length);
  let decided = false;
  try {
    // A small job is stored by its admission's own statement (admission.ts INLINE_INTAKE_TASKS).
    const inline = intake.rows && copies.length <= INLINE_INTAKE_TASKS ? inlineIntake(input, job, intake.rows()) : undefined;
    if (inline) await storeModule(market.db, caller.id, job);
    else await storeIntake(market.db, caller.id, intake, jobId);
    // A curve that can go negative holds a penalty from the market's reserve, read as the ledger
    // has it at the job's turn: such a job is decided alone on the lock. Any other is decided from
    // memory, its statement written while the next decision is made.
    const { answer: decision, needed } =
      minBenefit(input.benefit) < 0
        ? await market.serial(async () => admit(market, caller, input, job, jobId, copies, inline, await penaltyHolder(market.db, input.benefit)))
        : await market.pipelined(() => admit(market, caller, input, job, jobId, copies, inline, NO_PENALTY));
    const answer = await decision
      .catch(async (e: unknown) => {
        if (consumerShort(e)) throw refuseBalance(await balance(market.db, { kind: "consumer", userId: caller.id }), needed);
        throw e;
      })
      .finally(() => release());
    decided = true;
    // A rejected job's tasks are never run: removed after the answer, outside the lock (none were stored inline).
    if (answer.decision.outcome === "rejected" && !inline) await market.db.task.deleteMany({ where: { jobId } });
    return answer;
  } catch (e) {
    release();
    intake.discard();
    if (!decided) await discardIntake(market.db, jobId).catch(() => {});
    throw e;
  }
}

/**
 * Modules this process has stored: a module row is never removed, so a submission sending one of
 * them again (every example job does) skips sending its bytes to the database. The 10,000 stored
 * last are known; one forgotten only costs a statement.
 */
const stored = new WeakMap<Db, LRUCache<string, true>>();

function storedModules(db: Db) {
  let known = stored.get(db);
  if (!known) stored.set(db, (known = new LRUCache<string, true>({ max: 10_000 })));
  return known;
}

/** The job's module, unless this process stored it before. */
async function storeModule(db: Db, ownerId: string, job: PreparedJob) {
  const bytes = job.moduleBytes;
  if (bytes && !storedModules(db).has(job.moduleHash)) {
    // One statement (ON CONFLICT DO NOTHING): two submissions of one new module at once both succeed.
    await db.module.createMany({
      data: { hash: job.moduleHash, bytes: toBytes(bytes), size: bytes.length, imports: toJson(job.imports), ownerId },
      skipDuplicates: true,
    });
    storedModules(db).set(job.moduleHash, true);
  }
}

/** A small job's row and tasks as its admission's statement writes them (admission.ts InlineIntake). */
function inlineIntake(input: SubmissionHead, job: PreparedJob, tasks: NewTask[]): InlineIntake {
  return {
    name: input.name,
    nameToProducers: input.nameToProducers,
    example: job.example,
    moduleHash: job.moduleHash,
    benefit: input.benefit,
    replicas: input.replicas,
    taskCount: job.tasks.length,
    workPerTask: plannedWork(job),
    declaredWorkPerTask: job.workPerTask ?? null,
    pilotCount: pilotsOf(job),
    memoryMbPerTask: job.memoryMbPerTask,
    taskLimits: job.taskLimits,
    tasks,
  };
}

/** The job's module, its row (in intake, see INTAKE) and every copy of every task, chunk by chunk. */
async function storeIntake(db: Db, ownerId: string, { head: input, job, writeTasks }: Intake, jobId: string) {
  await storeModule(db, ownerId, job);
  await db.job.create({
    data: {
      id: jobId,
      ownerId,
      name: input.name,
      nameToProducers: input.nameToProducers,
      example: job.example,
      moduleHash: job.moduleHash,
      benefit: input.benefit,
      replicas: input.replicas,
      ...INTAKE,
      decision: toJson({ outcome: "delayed", reasons: [] }),
      taskCount: job.tasks.length,
      workPerTask: plannedWork(job),
      declaredWorkPerTask: job.workPerTask ?? null,
      ...(pilotsOf(job) === null ? {} : { workEstimate: "provisional", pilotCount: pilotsOf(job) }),
      memoryMbPerTask: job.memoryMbPerTask,
      ...(job.taskLimits ? { taskLimits: toJson(job.taskLimits) } : {}),
    },
  });
  await writeTasks(jobId);
}

/** A job as its decision is written: who owns it, what it is worth, its size and its tasks' limits. */
interface Decided {
  id: string;
  ownerId: string;
  benefit: BenefitCurve;
  replicas: number;
  taskCount: number;
  /** How many tasks run as pilots first; null for a job with a work estimate. */
  pilots: number | null;
  workPerTask: number;
  wallMs: number;
}

/**
 * A decision on a job as writeAdmission records it (at submission, and when a delayed job is
 * answered again): the escrow it takes, the penalty held beside it, what the consumer is told,
 * the decision log's entries and the placements.
 */
function admissionOf(market: Market, decision: Decision, job: Decided, now: number, penalty: PenaltyHold): { admission: Admission; record: ReturnType<typeof decisionRecord> } {
  const pricing = market.adminSettings.pricing;
  const admitted = decision.outcome === "admitted" ? decision : null;
  const record = decisionRecord(market, decision, job.replicas, job.benefit, job.pilots);
  const price = admitted ? toMicro(admitted.price) : null;
  const admission: Admission = {
    jobId: job.id,
    ownerId: job.ownerId,
    status: decision.outcome,
    record,
    now,
    completionAt: admitted?.completionAt ?? null,
    priceMicro: price,
    pilotPriceMicro: job.pilots === null ? null : (price ?? 0n),
    pricing,
    escrowMicro: admitted ? escrowFor(market, job.benefit, admitted, pricing, job.workPerTask, job.wallMs) : 0n,
    penaltyHeldMicro: admitted ? penalty(admitted.price) : 0n,
    decisions: jobDecisionEntries(decision, record.reasons, { id: job.id, ownerId: job.ownerId, tasks: job.taskCount }, now),
    placed: new Map(admitted ? admitted.placements.map((p) => [p.taskId, p.machineId]) : []),
  };
  return { admission, record };
}

/**
 * The engine's decision on a stored job, on the market's lock and from memory alone: the engine
 * counts the job's load at once (the next decision sees it), and the decision's one statement
 * (admission.ts: the consumer's debit is conditional on their balance inside it, so it is not read
 * first) goes to the journal. The job joins memory and its workers hear of it once the statement
 * committed; if it fails, the engine forgets the job. `answer` settles then.
 */
function admit(market: Market, caller: Caller, input: SubmissionHead, job: PreparedJob, jobId: string, copies: ReturnType<typeof copiesOf>, intake: InlineIntake | undefined, penalty: PenaltyHold) {
  const now = market.clock.now();
  const spec = specOf(jobId, now, job, input.benefit, input.replicas);
  const pilots = pilotsOf(job);
  const wallMs = leaseLimits(job.taskLimits).wallMs;
  const decision = pilots === null ? market.engine.decide(spec, now) : market.engine.decidePilots(spec, wallMs, now);
  const about = { id: jobId, ownerId: caller.id, benefit: input.benefit, replicas: input.replicas, taskCount: job.tasks.length, pilots, workPerTask: plannedWork(job), wallMs };
  const { admission, record } = admissionOf(market, decision, about, now, penalty);
  const { placed, pricing, escrowMicro: needed, penaltyHeldMicro: penaltyHeld, decisions } = admission;
  const status = decision.outcome;
  const price = admission.priceMicro ?? 0n;
  // Only the pilots are live until the engine admits the rest (market/remainder.ts).
  const live = pilots === null ? copies : copies.filter((c) => c.index < pilots);
  // A small job's tasks placed on idle machines waiting on their streams are leased by the same statement.
  const leases = intake && status === "admitted" ? planAdmissionLeases(market, placed, new Set(live.map((c) => c.id)), now) : undefined;
  if (status !== "rejected") market.engine.commit(spec, decision);
  const answer = new Promise<{ jobId: string; decision: typeof record }>((resolve, reject) =>
    market.journal.add({
      kind: "admission",
      // In its turn after the reports and leases decided before it, and the ones decided while it
      // waits (journal.ts, YIELD_PASSES): its debit is conditional on the balance.
      yields: true,
      write: () => writeAdmission(inOrder(market), { ...admission, ...(intake ? { intake } : {}), ...(leases ? { leases } : {}) }, MARKET_OWNER),
      applied: () => {
        countDecisions(market, decisions);
        if (status !== "rejected") {
          jobDecided(market, {
            id: jobId,
            ownerId: caller.id,
            moduleHash: job.moduleHash,
            example: job.example,
            status: status === "admitted" ? "admitted" : "delayed",
            taskCount: job.tasks.length,
            tasksDone: 0,
            workPerTask: plannedWork(job),
            declaredWorkPerTask: plannedWork(job),
            wallMs,
            memoryMbPerTask: job.memoryMbPerTask,
            escrowMicro: needed,
            penaltyHeldMicro: penaltyHeld,
            priceMicro: price,
            paidMicro: 0n,
            pricing,
            replicas: input.replicas,
            arrivedAt: now,
            benefit: input.benefit,
            ...(pilots === null ? {} : { pilots: { count: pilots, priceMicro: price, phase: "provisional" as const } }),
          }, live, placed);
          if (leases && intake) applyAdmissionLeases(market, jobId, intake, job.taskLimits, leases, now);
        }
        market.log(`job ${input.name} (${shortId(jobId)}): ${status}, ${job.tasks.length} tasks`);
        opsOf(market).metrics.submissions.inc({ outcome: status });
        market.emit({ kind: "job", jobId, ownerId: caller.id });
        resolve({ jobId, decision: record });
      },
      failed: (e) => {
        if (status !== "rejected") decisionUndone(market, jobId, decision);
        if (leases) dropAdmissionLeases(market, leases);
        reject(e);
      },
    }),
  );
  return { answer, needed };
}

/**
 * The engine's answers on delayed jobs at a tick (Engine.tick): the ones it gives up on are
 * rejected with its reasons (max-wait-exceeded), the ones it wants asked again are run through
 * its admission (seed 003 section 4.2: rejected or delayed "depending on the system"). Which
 * jobs, and how often a job is asked again, is the engine's rule (policies/outcomes.ts); the
 * service adds none of its own. One step of the market's lock per job, so other calls are served
 * between big jobs: before each step the event loop reads what arrived meanwhile (setImmediate
 * runs after the poll for I/O), else the steps of jobs still delayed, which wait on nothing,
 * would follow each other in one turn (five 10,000-task jobs: 150 ms and more without a read).
 */
export async function answerDelayed(market: Market, tick: Pick<TickDecision, "reevaluate" | "reject">) {
  for (const { jobId, reasons } of tick.reject) {
    await letCallsIn();
    await market.serial(() => settleDelayed(market, jobId, () => ({ outcome: "rejected", reasons })));
  }
  for (const jobId of tick.reevaluate) {
    await letCallsIn();
    await market.serial(() => settleDelayed(market, jobId, (spec, now) => market.engine.decide(spec, now)));
  }
}

/** Inside the market's lock: a delayed job's new answer, made durable, then live (a delay changes only the engine's record). */
async function settleDelayed(market: Market, jobId: string, answer: (spec: JobSpec, now: number) => Decision) {
  const now = market.clock.now();
  const job = market.state.jobs.get(jobId);
  if (job?.status !== "delayed") return;
  const tasks = market.state.tasks.ofJob(job.id);
  const spec: JobSpec = {
    id: job.id,
    arrivedAt: job.arrivedAt,
    benefit: job.benefit,
    replicas: job.replicas,
    tasks: tasks.filter((t) => t.replica === 0).map((t) => demandOf(t, job)),
  };
  const penalty = await penaltyHolder(market.db, job.benefit);
  const decision: Decision = answer(spec, now);
  if (decision.outcome === "delayed") return jobStillDelayed(market, spec, decision);
  const pilots = job.pilots?.phase === "provisional" ? job.pilots.count : null;
  const about = { id: job.id, ownerId: job.ownerId, benefit: job.benefit as BenefitCurve, replicas: job.replicas, taskCount: job.taskCount, pilots, workPerTask: job.workPerTask, wallMs: job.wallMs };
  // One statement (tasks/admission.ts), as at submission: the consumer's debit is conditional on
  // their balance inside it, and a consumer who can no longer pay is told so in a rejection.
  const write = async ({ admission }: ReturnType<typeof admissionOf>) => {
    await writeAdmission(inOrder(market), { ...admission, wasDelayed: true }, MARKET_OWNER);
    countDecisions(market, admission.decisions);
    return admission;
  };
  const wanted = admissionOf(market, decision, about, now, penalty);
  const written = await write(wanted).catch(async (e: unknown) => {
    if (decision.outcome !== "admitted" || !consumerShort(e)) throw e;
    const short = { outcome: "rejected" as const, reasons: [{ code: "insufficient-credits" as const, needed: toCredits(wanted.admission.escrowMicro) }] };
    return write(admissionOf(market, short, about, now, penalty));
  });
  if (written.status === "admitted" && decision.outcome === "admitted") {
    const { escrowMicro, penaltyHeldMicro, pricing } = written;
    delayedJobAdmitted(market, job, { escrowMicro, penaltyHeldMicro, priceMicro: toMicro(decision.price), pricing }, tasks, spec, decision);
  } else delayedJobRejected(market, job.id);
  market.emit({ kind: "job", jobId: job.id, ownerId: job.ownerId });
}
