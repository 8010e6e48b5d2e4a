import { setImmediate as letCallsIn } from "node:timers/promises";
import { countDecisions, jobDecisionEntries } from "../ops/decisions.ts";
import { opsOf } from "../ops/ops.ts";
import { BenefitCurve, cappedBenefit, escrowFor, maxBenefit, pilotCount, provisionalWork } from "@cyclemarket/costbenefit";
import { leaseLimits } from "../resources/leases.ts";
import type { Caller } from "../api/trpc.ts";
import { refuse } from "../api/errors.ts";
import type { Market } from "../market/market.ts";
import { demandOf, type Decision, type JobSpec, type Reason, type TickDecision } from "../market/engine.ts";
import { replicaShortfall } from "../market/replicas.ts";
import { replicaId } from "../market/live.ts";
import { decisionUndone, delayedJobAdmitted, delayedJobRejected, jobDecided, jobStillDelayed } from "../market/transitions.ts";
import { toBytes, toJson, type Db } from "../db/client.ts";
import { balance, spendable, toCredits, toMicro } from "../ledger/ledger.ts";
import { FloorCrossed } from "../db/sql/statement.ts";
import { grantModuleRight, requireModuleRight, shippedModule } from "./module-rights.ts";
import { checkModule } from "./modules.ts";
import { INTAKE, discardIntake, holdIntake, insertTasks, type NewTask } from "./intake.ts";
import { headOf, prepareSubmission, rowsOf, type PreparedJob, type SubmissionHead, type SubmitJob } from "./submission.ts";
import { StagedSubmission } from "./intake-pool.ts";
import { INLINE_INTAKE_TASKS, writeAdmission, type Admission, type InlineIntake } from "./admission.ts";
import { inOrder } from "./report-batch.ts";
import { applyAdmissionLeases, dropAdmissionLeases, planAdmissionLeases } from "./admission-leases.ts";
import { rowId } from "../db/row-id.ts";
import { shortId } from "@cyclemarket/client/job-file";

export { MAX_TASKS, SubmitJob, JobSource } from "./submission.ts";

/** What admission puts in escrow: what the job can be charged (costbenefit escrowFor). */
export function escrowOf(benefit: BenefitCurve, d: Decision & { outcome: "admitted" }, pricing: "posted" | "bid", maxSpend: number | undefined): bigint {
  return toMicro(escrowFor({ pricing, price: d.price, maxSpend, maxBenefit: maxBenefit(benefit) }));
}

function refuseBalance(held: bigint, needed: bigint) {
  return refuse.badRequest(
    { code: "insufficient-credits", balance: toCredits(held), needed: toCredits(needed), missing: toCredits(needed > held ? needed - held : 0n) },
    `The job needs ${toCredits(needed)} credits in escrow (what it can be charged) and your balance is ${toCredits(held)} credits.`,
  );
}

/**
 * What the consumer is told of the money beside the price: producers are paid piece rates fixed
 * when their leases are handed out, the consumer pays the quote while the work estimate holds
 * (within its tolerance; past it the charge follows the measured work up to maxSpend), a failed
 * run is paid only once another owner reproduced it, a task is given up after `maxAttempts`, and
 * lateness is relieved only from the late producers' pieces and the market's own downtime.
 */
function termsOf(market: Market, price: number | null, maxSpend: number | undefined) {
  const t = market.settings.terms;
  return {
    pricing: market.adminSettings.pricing,
    feeFraction: market.adminSettings.feeFraction,
    pieceRatesFixedAtLease: true,
    failedRunsPaidWhenReproduced: true,
    maxAttempts: t.maxAttempts,
    confirmedFailureLimit: t.confirmedFailureLimit,
    estimateTolerance: t.estimateToleranceMultiple,
    maxSpend: maxSpend ?? price,
    latenessRelief: "late-producers-and-market-downtime" as const,
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

async function prepare(market: Market, userId: string, submission: Submission, maxModuleBytes: number): Promise<Intake> {
  if (submission instanceof StagedSubmission) {
    const { head, job } = submission;
    try {
      if (head.source.kind === "module") await namedModule(market, userId, job, maxModuleBytes);
    } catch (e) {
      submission.drop();
      throw e;
    }
    return { head, job, writeTasks: (jobId) => submission.store(jobId, head.replicas), discard: () => submission.drop(), rows: null };
  }
  const { job, inputs } = prepareSubmission(submission, maxModuleBytes);
  if (submission.source.kind === "module") await namedModule(market, userId, job, maxModuleBytes);
  const head = headOf(submission);
  const rows = () => rowsOf(job.tasks, inputs, head.replicas);
  return { head, job, writeTasks: (jobId) => insertTasks(market.resources.database, jobId, rows()), discard: () => {}, rows };
}

/**
 * A module named by hash: the caller sent its bytes, or it is a shipped example's, whose bytes the
 * job then carries so it is stored if no example job stored it yet.
 */
async function namedModule(market: Market, userId: string, job: PreparedJob, maxModuleBytes: number) {
  await requireModuleRight(market, job.moduleHash, userId);
  const bytes = shippedModule(job.moduleHash);
  if (bytes && !job.moduleBytes) Object.assign(job, { moduleBytes: bytes, imports: checkModule(bytes, maxModuleBytes).info.imports });
}

/** How many of the job's first tasks run as pilots: null when the consumer gave a work estimate. */
const pilotsOf = (job: PreparedJob) => (job.workPerTask === undefined ? pilotCount(job.tasks.length) : null);

/** The work the market plans with: the consumer's estimate, or the most a pilot is paid for. */
const plannedWork = (market: Market, job: PreparedJob) => job.workPerTask ?? provisionalWork(market.settings.terms, leaseLimits(job.taskLimits).wallMs / 1000);

/** The curve the engine plans with: the consumer's, never above their maxSpend. */
export const plannedBenefit = (benefit: BenefitCurve, maxSpend: number | undefined | null) => (maxSpend == null ? benefit : cappedBenefit(benefit, maxSpend));

function specOf(market: Market, jobId: string, arrivedAt: number, job: PreparedJob, input: Pick<SubmissionHead, "benefit" | "maxSpend" | "replicas">): JobSpec {
  const work = plannedWork(market, job);
  return {
    id: jobId,
    arrivedAt,
    benefit: plannedBenefit(input.benefit, input.maxSpend),
    replicas: input.replicas,
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
export function decisionRecord(market: Market, d: Decision, replicas: number, maxSpend: number | undefined, pilots: number | null = null) {
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
        priceAtWork: d.priceAtWork ?? null,
        terms: termsOf(market, d.price, maxSpend),
        ...provisional,
      }
    : { outcome: d.outcome, reasons, terms: termsOf(market, null, maxSpend), ...provisional };
}

/**
 * What the market would decide now, committing nothing: the consumer's quote. An admitted quote
 * also says what a submission would hold in escrow of the consumer's balance, and a job the
 * balance cannot escrow is quoted as a submission would end, refused with the price it would
 * cost and what is missing (beside the engine's reasons to admit it), never as admitted.
 */
export async function quoteJob(market: Market, caller: Caller, submission: Submission, maxModuleBytes: number) {
  const consumerId = caller.id;
  const { head: input, job, discard } = await prepare(market, caller.id, submission, maxModuleBytes);
  discard();
  const now = market.clock.now();
  const pilots = pilotsOf(job);
  // Decided from memory alone (the engine counts the load of decisions still being written): no statement to wait for.
  const { record, escrowMicro } = await market.pipelined(() => {
    const spec = specOf(market, "quote", now, job, input);
    const wallMs = leaseLimits(job.taskLimits).wallMs;
    const d = pilots === null ? market.engine.quote(spec, now) : market.engine.decidePilots(spec, wallMs, market.settings.terms, now, true);
    const escrow = d.outcome === "admitted" ? escrowOf(input.benefit, d, market.adminSettings.pricing, input.maxSpend) : 0n;
    return { record: decisionRecord(market, d, input.replicas, input.maxSpend, pilots), escrowMicro: escrow };
  });
  if (record.outcome !== "admitted") return record;
  const held = await spendable(market.db, { kind: "consumer", userId: consumerId });
  if (held >= escrowMicro) return { ...record, escrow: toCredits(escrowMicro), balance: toCredits(held) };
  const short: Reason = { code: "insufficient-credits", needed: toCredits(escrowMicro), balance: toCredits(held), price: record.price, missing: toCredits(escrowMicro - held) };
  return { outcome: "rejected" as const, reasons: [short, ...record.reasons], terms: record.terms, provisional: record.provisional, pilots: record.pilots };
}

/**
 * The whole of a job to be split across managers (market/job-split.ts): its head and tasks read,
 * its module stored (the whole's row names it), none of its tasks kept here (each part's
 * manager stores its own).
 */
export async function storeWhole(market: Market, userId: string, submission: Submission, maxModuleBytes: number) {
  const { head, job, discard } = await prepare(market, userId, submission, maxModuleBytes);
  discard();
  await storeModule(market, userId, job);
  return { head, job };
}

/**
 * The Task Manager takes the job; the engine decides; the decision is stored before it is told.
 * The job's row and tasks are stored first, in chunks and outside the market's lock (intake.ts);
 * inside it the engine decides and the decision, escrow and placements are written.
 */
export async function submitJob(market: Market, caller: Caller, submission: Submission, maxModuleBytes: number, network: string | null = null) {
  const intake = await prepare(market, caller.id, submission, maxModuleBytes);
  const { head: input, job } = intake;
  const jobId = rowId();
  const copies = copiesOf(job, input.replicas);
  const release = holdIntake(market, caller.id, copies.length);
  let decided = false;
  try {
    // A small job is stored by its admission's own statement (admission.ts INLINE_INTAKE_TASKS).
    const inline = intake.rows && copies.length <= INLINE_INTAKE_TASKS ? inlineIntake(market, input, job, intake.rows()) : undefined;
    if (inline) await storeModule(market, caller.id, job);
    else await storeIntake(market, caller.id, intake, jobId);
    // Decided from memory, its statement written while the next decision is made.
    const { answer: decision, needed } = await market.pipelined(() => admit(market, caller, input, job, jobId, copies, inline, network));
    const answer = await decision
      .catch(async (e: unknown) => {
        if (e instanceof FloorCrossed) throw refuseBalance(await balance(market.db, { kind: "consumer", userId: caller.id }), needed);
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
 * The job's module, unless this process stored it before; a consumer who sent its bytes (not an
 * example's) may name it by hash from then on (module-rights.ts).
 */
async function storeModule(market: Market, ownerId: string, job: PreparedJob) {
  const { db } = market;
  const stored = market.resources.storedModules;
  const bytes = job.moduleBytes;
  if (bytes && !stored.has(job.moduleHash)) {
    // One statement (ON CONFLICT DO NOTHING): two submissions of one new module at once both succeed.
    await db.module.createMany({
      data: { hash: job.moduleHash, bytes: toBytes(bytes), size: bytes.length, imports: toJson(job.imports), ownerId },
      skipDuplicates: true,
    });
    stored.set(job.moduleHash, true);
  }
  if (bytes && job.example === null && !shippedModule(job.moduleHash)) await grantModuleRight(market, job.moduleHash, ownerId);
}

/** A small job's row and tasks as its admission's statement writes them (admission.ts InlineIntake). */
function inlineIntake(market: Market, input: SubmissionHead, job: PreparedJob, tasks: NewTask[]): InlineIntake {
  return {
    name: input.name,
    nameToProducers: input.nameToProducers,
    managerId: market.managerId,
    partOf: input.part?.of ?? null,
    taskOffset: input.part?.of ? input.part.fromTask : 0,
    example: job.example,
    moduleHash: job.moduleHash,
    benefit: input.benefit,
    replicas: input.replicas,
    taskCount: job.tasks.length,
    workPerTask: plannedWork(market, job),
    declaredWorkPerTask: job.workPerTask ?? null,
    pilotCount: pilotsOf(job),
    memoryMbPerTask: job.memoryMbPerTask,
    taskLimits: job.taskLimits,
    tasks,
  };
}

/** The job's module, its row (in intake, see INTAKE) and every copy of every task, chunk by chunk. */
async function storeIntake(market: Market, ownerId: string, { head: input, job, writeTasks }: Intake, jobId: string) {
  const db = market.db;
  await storeModule(market, ownerId, job);
  await db.job.create({
    data: {
      id: jobId,
      ownerId,
      name: input.name,
      nameToProducers: input.nameToProducers,
      managerId: market.managerId,
      ...(input.part?.of ? { partOf: input.part.of, taskOffset: input.part.fromTask } : {}),
      example: job.example,
      moduleHash: job.moduleHash,
      benefit: input.benefit,
      replicas: input.replicas,
      ...INTAKE,
      decision: toJson({ outcome: "delayed", reasons: [] }),
      taskCount: job.tasks.length,
      workPerTask: plannedWork(market, job),
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
  maxSpend: number | undefined;
  replicas: number;
  taskCount: number;
  /** How many tasks run as pilots first; null for a job with a work estimate. */
  pilots: number | null;
  workPerTask: number;
  wallMs: number;
}

/**
 * A decision on a job as writeAdmission records it (at submission, and when a delayed job is
 * answered again): the escrow it takes, what the consumer is told,
 * the decision log's entries and the placements.
 */
function admissionOf(market: Market, decision: Decision, job: Decided, now: number): { admission: Admission; record: ReturnType<typeof decisionRecord> } {
  const pricing = market.adminSettings.pricing;
  const admitted = decision.outcome === "admitted" ? decision : null;
  const record = decisionRecord(market, decision, job.replicas, job.maxSpend, job.pilots);
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
    escrowMicro: admitted ? escrowOf(job.benefit, admitted, pricing, job.maxSpend) : 0n,
    maxSpendMicro: job.maxSpend === undefined ? null : toMicro(job.maxSpend),
    submitNetwork: null,
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
function admit(market: Market, caller: Caller, input: SubmissionHead, job: PreparedJob, jobId: string, copies: ReturnType<typeof copiesOf>, intake: InlineIntake | undefined, network: string | null) {
  const now = market.clock.now();
  const spec = specOf(market, jobId, now, job, input);
  const pilots = pilotsOf(job);
  const wallMs = leaseLimits(job.taskLimits).wallMs;
  const decision = pilots === null ? market.engine.decide(spec, now) : market.engine.decidePilots(spec, wallMs, market.settings.terms, now);
  const about = { id: jobId, ownerId: caller.id, benefit: input.benefit, maxSpend: input.maxSpend, replicas: input.replicas, taskCount: job.tasks.length, pilots, workPerTask: plannedWork(market, job), wallMs };
  const { admission: decided, record } = admissionOf(market, decision, about, now);
  const admission = { ...decided, submitNetwork: network };
  const { placed, pricing, escrowMicro: needed, decisions } = admission;
  const status = decision.outcome;
  const price = admission.priceMicro ?? 0n;
  // Only the pilots are live until the engine admits the rest (market/remainder.ts).
  const live = pilots === null ? copies : copies.filter((c) => c.index < pilots);
  // A small job's tasks placed on idle machines waiting on their streams are leased by the same statement.
  const pilotIds = new Set(pilots === null ? [] : live.map((c) => c.id));
  const leases =
    intake && status === "admitted" ? planAdmissionLeases(market, placed, new Set(live.map((c) => c.id)), { workPerTask: about.workPerTask, wallMs }, (id) => pilotIds.has(id), now) : undefined;
  if (status !== "rejected") market.engine.commit(spec, decision);
  const answer = new Promise<{ jobId: string; decision: typeof record }>((resolve, reject) =>
    market.journal.add({
      kind: "admission",
      // In its turn after the reports and leases decided before it, and the ones decided while it
      // waits (journal.ts, YIELD_PASSES): its debit is conditional on the balance.
      yields: true,
      write: () => writeAdmission(inOrder(market), { ...admission, ...(intake ? { intake } : {}), ...(leases ? { leases } : {}) }),
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
            workPerTask: about.workPerTask,
            declaredWorkPerTask: about.workPerTask,
            workSamples: [],
            wallMs,
            memoryMbPerTask: job.memoryMbPerTask,
            escrowMicro: needed,
            priceMicro: price,
            priceAtWork: decision.outcome === "admitted" ? (decision.priceAtWork ?? null) : null,
            maxSpendMicro: admission.maxSpendMicro,
            submitNetwork: admission.submitNetwork,
            paidMicro: 0n,
            heldMicro: 0n,
            failedTasks: 0,
            pricing,
            replicas: input.replicas,
            arrivedAt: now,
            plannedAt: decision.outcome === "admitted" ? decision.completionAt : null,
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
 * its admission (the Java Market paper section 4.2: rejected or delayed "depending on the system"). Which
 * jobs, and how often a job is asked again, is the engine's rule (policies/outcomes.ts); the
 * service adds none of its own. One step of the market's lock per job, so other calls are served
 * between big jobs: before each step the event loop reads what arrived meanwhile (setImmediate
 * runs after the poll for I/O), else the steps of jobs still delayed, which wait on nothing,
 * would follow each other in one turn, holding every other call while several big jobs are asked.
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
    benefit: plannedBenefit(job.benefit, job.maxSpendMicro === null ? null : toCredits(job.maxSpendMicro)),
    replicas: job.replicas,
    tasks: tasks.filter((t) => t.replica === 0).map((t) => demandOf(t, job)),
  };
  const decision: Decision = answer(spec, now);
  if (decision.outcome === "delayed") return jobStillDelayed(market, spec, decision);
  const pilots = job.pilots?.phase === "provisional" ? job.pilots.count : null;
  const maxSpend = job.maxSpendMicro === null ? undefined : toCredits(job.maxSpendMicro);
  const about = { id: job.id, ownerId: job.ownerId, benefit: job.benefit as BenefitCurve, maxSpend, replicas: job.replicas, taskCount: job.taskCount, pilots, workPerTask: job.workPerTask, wallMs: job.wallMs };
  // One statement (tasks/admission.ts), as at submission: the consumer's debit is conditional on
  // their balance inside it, and a consumer who can no longer pay is told so in a rejection.
  const write = async ({ admission }: ReturnType<typeof admissionOf>) => {
    await writeAdmission(inOrder(market), { ...admission, wasDelayed: true });
    countDecisions(market, admission.decisions);
    return admission;
  };
  const wanted = admissionOf(market, decision, about, now);
  const written = await write(wanted).catch(async (e: unknown) => {
    if (decision.outcome !== "admitted" || !(e instanceof FloorCrossed)) throw e;
    const short = { outcome: "rejected" as const, reasons: [{ code: "insufficient-credits" as const, needed: toCredits(wanted.admission.escrowMicro) }] };
    return write(admissionOf(market, short, about, now));
  });
  if (written.status === "admitted" && decision.outcome === "admitted") {
    const { escrowMicro, pricing } = written;
    delayedJobAdmitted(market, job, { escrowMicro, priceMicro: toMicro(decision.price), pricing, priceAtWork: decision.priceAtWork ?? null, plannedAt: decision.completionAt }, tasks, spec, decision);
  } else delayedJobRejected(market, job.id);
  market.emit({ kind: "job", jobId: job.id, ownerId: job.ownerId });
}
