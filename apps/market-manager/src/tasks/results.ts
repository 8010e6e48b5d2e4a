import type { Market } from "../market/market.ts";
import { timedSettlement } from "../ops/ops.ts";
import type { LiveJob, LiveLease, LiveMachine, LiveTask, TaskFailure } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import type { TaskReport } from "./task-report.ts";
import { combineOutputs } from "./examples.ts";
import { jobEnded, machineChanged, taskDone } from "../market/transitions.ts";
import { toBytes, toJson } from "../db/client.ts";
import { reasonOf } from "../api/errors.ts";
import { confirmedFailure, copyPieces, contestPieces, failurePieces, spotChecked, taskOutcome, verifyCopies, type CopyVote, type EarlierCopies, type Verdict } from "@cyclemarket/costbenefit";
import { taskShare } from "../resources/lease-terms.ts";
import { FactChanges, quorumNetwork, standingIn, verifierIn } from "../market/standing.ts";
import { baseTaskId, replicaId } from "../market/live.ts";
import { addTaskCopy } from "../db/sql/add-copy.ts";
import { forfeitPay } from "./forfeit.ts";
import { balance, post, toCredits, type Tx } from "../ledger/ledger.ts";
import { piece } from "../ledger/entries.ts";
import { settleCompleted, settleUnfinished } from "../ledger/settlement.ts";
import { contradictedAfter, measureRun, overSpendLimit, runPiece, splitPiece, type RunMeasure } from "./run-pay.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { addWorkSample } from "../db/sql/task-rows.ts";
import { heldForJob } from "../db/sql/job-money.ts";
import { acceptedStdouts } from "../db/sql/job-outputs.ts";

export interface Completion {
  machine: LiveMachine;
  lease: LiveLease;
  task: LiveTask;
  ok: boolean;
  stdout: Buffer;
  stderr: Buffer;
  hash: string;
  report: TaskReport;
  /** Reported after its lease expired (market.state.lateLeases): accepted only as the task's first result. */
  late: boolean;
}

/** Reports elapsed times as a whole number of milliseconds the database can hold, whatever was claimed. */
export const storedMs = (ms: number) => (Number.isFinite(ms) ? Math.min(2_000_000_000, Math.max(0, Math.round(ms))) : 0);

/** The code a failed run is compared by: its error's code (a trap, a limit), else its exit code. */
export const failureCode = (r: TaskReport) => r.error?.code ?? `exit:${r.exitCode}`;

/**
 * Records a reported run. The engine's verification decides (costbenefit quorum.ts, standing.ts):
 * a task is done when accounts with standing agree on its output hash, a strict majority of the
 * consumer's k of them; a result of accounts without standing, or a single-copy result drawn for a
 * spot check, gets one more copy, run on a machine of an account with standing. Agreeing copies
 * are accepted and paid the piece rate their lease carries, the copies verification added within
 * the task's share of the quote (the engine's copyPieces), disagreeing ones are not paid; the
 * facts each verdict establishes are added to the accounts' standing, and an account caught
 * forging forfeits what the job paid it. A failed run is paid nothing unless a machine of another owner reproduces the same
 * failure: until then the task runs again elsewhere; once confirmed, the failed runs are paid and
 * the task has failed for good, and the job stops after `confirmedFailureLimit` such tasks. A
 * task that fails `maxAttempts` times without confirmation, or whose copies never agree, is given
 * up and the job fails. A result reported after its lease expired is accepted only as its task's
 * first, and its piece is held for the job's lateness.
 */
export async function completeTask(market: Market, c: Completion) {
  const step = prepareCompletion(market, c);
  step.apply(await market.db.$transaction((tx) => step.write(tx)));
}

export type CompletionStep = ReturnType<typeof prepareCompletion>;

/**
 * completeTask in three parts, so several reports can share one transaction (tasks/report-batch.ts):
 * the decision, taken from memory now; `write`, its rows, inside a transaction; `apply`, memory
 * once that transaction committed. `count` moves the job's done count ahead of the commit for a
 * later report of the same group to see, and `uncount` takes it back if the group fails.
 */
export function prepareCompletion(market: Market, c: Completion) {
  const { task, lease, machine } = c;
  const job = market.state.jobs.get(task.jobId)!;
  const now = market.clock.now();
  const terms = market.settings.terms;
  const copies = market.state.copies(task);
  const pieceMicro = runPiece(market, c, now);
  const measure = c.ok ? measureRun(market, c, now) : null;

  // Decide from memory what this report does (the engine's verification), then make it so in one transaction.
  const decidedBefore = copies.find((t) => t.agreedHash)?.agreedHash ?? null;
  let agreed = decidedBefore;
  let agreedOwners = 0;
  let rerun: LiveTask[] = [];
  let verdict: Verdict | null = null;
  if (c.ok) {
    const state = market.state;
    const vote = (owner: string, network: string | null | undefined, hash: string): CopyVote => ({ hash, owner, network: quorumNetwork(state, owner, network), verifier: verifierIn(state, owner), standing: standingIn(state, owner, now).has });
    const votes = copies.filter((t) => t !== task && t.state === "done" && t.outputHash).map((t) => vote(t.producerId ?? t.machineId ?? t.id, t.producerNetwork, t.outputHash!));
    votes.push(vote(machine.ownerId, machine.network, c.hash));
    // A single copy by an account with standing is spot-checked by a draw from the market's secret seed.
    const own = standingIn(state, machine.ownerId, now);
    const checked = copies.length > job.replicas || (copies.length === 1 && own.has && spotChecked(market.verification.seed, task.id, own.spotCheck));
    verdict = verifyCopies({ votes, replicas: job.replicas, copies: copies.length, copiesOut: copies.some((t) => t !== task && t.state !== "done"), checked, agreedBefore: decidedBefore });
    if (!decidedBefore) {
      agreed = verdict.agreed;
      agreedOwners = verdict.owners;
      if (verdict.rerun) rerun = copies; // every copy ran, as many as a task may have, and none settled it
    }
  }
  const decidesNow = !decidedBefore && agreed !== null;
  // One more copy, on a machine of an account with standing (market/replicas.ts mayNotRun).
  const addCopy = verdict?.addCopy && !decidedBefore ? { id: replicaId(baseTaskId(task.id), Math.max(...copies.map((t) => t.replica)) + 1), replica: Math.max(...copies.map((t) => t.replica)) + 1 } : null;
  // What the verdict establishes about the accounts: a copy judged after the quorum speaks only for itself.
  const facts = new FactChanges();
  const forgers: string[] = [];
  if (verdict && (decidesNow || decidedBefore)) {
    const only = decidedBefore ? (o: string) => o === machine.ownerId : () => true;
    for (const o of verdict.verified.filter(only)) facts.add(o, "verified");
    for (const o of verdict.disagreed.filter(only)) facts.add(o, "disagreements");
    for (const o of verdict.forgers.filter(only)) {
      facts.add(o, "forgeries");
      forgers.push(o);
    }
  }
  // Earlier failures of this task another owner's run now contradicts: their machines were wrong.
  if (decidesNow) for (const f of task.failures ?? []) facts.add(f.owner, "unconfirmedFailures");

  // A failed run: confirmed only by a machine of another owner failing the same way.
  const failure: Omit<TaskFailure, "resultId"> | null = c.ok ? null : { owner: machine.ownerId, machineId: machine.id, network: machine.network, code: failureCode(c.report), pieceMicro };
  const failures = [...(task.failures ?? []), ...(failure ? [{ ...failure, resultId: "" }] : [])];
  // Who failed, as the quorum counts them: a failure is confirmed only independently, by an account with standing among them.
  const failedRuns = failures.map((f) => ({ owner: f.owner, code: f.code, verifier: verifierIn(market.state, f.owner), network: quorumNetwork(market.state, f.owner, f.network), standing: standingIn(market.state, f.owner, now).has }));
  const confirmed = failure ? confirmedFailure(failedRuns) : null;
  const taskFails = confirmed !== null;
  // Decided, run again or given up, and whether the job ends: the engine's attempt and failure limits.
  const { succeeded, failedTasks, finishesJob, stopsOnFailures, givesUp } = taskOutcome(terms, {
    decidesNow,
    failureConfirmed: taskFails,
    failedRuns: failure ? failures.length : 0,
    copiesDisagree: rerun.length > 0,
    attempts: task.attempts,
    tasksDone: job.tasksDone,
    failedTasks: job.failedTasks,
    taskCount: job.taskCount,
  });
  // A job whose measured work contradicted its estimate stops once what that work is charged is
  // over the consumer's maxSpend, or its escrow cannot pay another piece like this one.
  const budgetAfter = job.escrowMicro - job.paidMicro - job.heldMicro - market.state.leases.promised(job.id) + lease.pieceRateMicro - (decidesNow ? pieceMicro : 0n);
  const atLimit =
    !givesUp && (overSpendLimit(market, job, measure) || (!finishesJob && succeeded + failedTasks < job.taskCount && budgetAfter < pieceMicro && contradictedAfter(market, job, measure)));
  const requeueThese = givesUp || taskFails ? [] : failure ? [task] : rerun;
  const forfeited = (job.forfeited ??= new Set());
  // The run that decides a task without copies, on time, with nothing else to judge: its rows are
  // the same for every such report, so a group writes them many to a statement (report-rows.ts),
  // and the job's last one settles the job in that statement too when memory knows what its
  // escrow holds (report-rows.ts plainRow says when).
  // A lease past its end that the sweeper has not ended yet is late all the same: its end was fixed when it was handed out.
  const overdue = c.late || now > lease.expiresAt;
  const plainRun = c.ok && !overdue && copies.length === 1 && decidesNow && !givesUp && !atLimit && agreed === c.hash && !task.failures?.length && facts.empty;

  const write = async (tx: Tx) => {
    const pay = new PiecePayer(market, tx, job);
    const late = overdue && decidesNow;
    const result = await tx.result.create({
      data: {
        id: lease.id,
        exitCode: c.report.exitCode,
        stdout: toBytes(c.stdout),
        stderr: toBytes(c.stderr),
        outputHash: Buffer.from(c.hash, "hex"),
        elapsedMs: storedMs(c.report.elapsedMs),
        error: c.report.error ? toJson(c.report.error) : undefined,
        failure: failure?.code ?? null,
        late,
        createdAt: new Date(now),
      },
      select: { id: true },
    });
    // The lease of this task on this machine, or the transaction fails: a result row has no foreign
    // keys (migration 20261124081500_result_rows_unchecked), this update proves its parents exist.
    await tx.lease.update({ where: { id: lease.id, taskId: task.id, machineId: machine.id }, data: c.late ? { endedAt: new Date(now) } : { status: "completed", endedAt: new Date(now) }, select: { id: true } });
    if (c.late && decidesNow) await withdrawRerun(market, tx, task, now);
    // This task's row changes once, at the end, with everything this report decides about it.
    const taskRow: { status?: "done" | "failed"; completedAt?: Date; acceptedResultId?: string; agreedOwners?: number; machineId?: null } = c.ok ? { status: "done", completedAt: new Date(now) } : {};

    // A producer caught forging loses the pay of every task of this job it ran, to the market's
    // account: first, as what it brings is all the market pays past the task's budget (contestPieces).
    let cover = 0n;
    for (const o of forgers) if (!forfeited.has(o)) cover += await forfeitPay(tx, { jobId: job.id, producerId: o, taskId: task.id, now });
    if (agreed) {
      // The copies that now stand judged: all done copies when the quorum is reached now, this
      // one alone when it arrives after the quorum.
      const judged = decidesNow ? copies.filter((t) => t === task || t.state === "done") : [task];
      const runs = judged.map((t) => (t === task ? { id: result.id, hash: c.hash, machine, pieceMicro, owner: machine.ownerId } : { id: t.resultId!, hash: t.outputHash!, pieceMicro: t.pieceMicro ?? 0n, owner: t.producerId ?? "" }));
      // What each is paid (the engine's copyPieces): the checks verification added within the
      // task's share of the quote, less what its copies were paid before (a copy reporting after
      // its task was decided, a rerun's).
      // A contest a forger with standing made is paid in full as far as the forger's forfeit goes, the market paying past the budget (contestPieces).
      const judgedCopies = judged.map((t, i) => ({ replica: t.replica, piece: runs[i]!.pieceMicro, agrees: runs[i]!.hash === agreed, forfeited: forfeited.has(runs[i]!.owner), standing: standingIn(market.state, runs[i]!.owner, now).has }));
      const earlier = copies.length > 1 ? await earlierCopies(tx, job, task, copies.filter((t) => !judged.includes(t))) : undefined;
      const { pieces: amounts, fromMarket } = verdict?.standingForger
        ? contestPieces(judgedCopies, job.replicas, taskShare(job), earlier, cover)
        : { pieces: copyPieces(judgedCopies, job.replicas, taskShare(job), earlier), fromMarket: [] };
      for (const [i, t] of judged.entries()) {
        const own = t === task;
        const { owner: _, ...r } = runs[i]!;
        const accepted = await judge(market, tx, pay, t, r, r.hash === agreed, own, own && late, amounts[i]!, fromMarket[i] ?? 0n);
        if (accepted && own) taskRow.acceptedResultId = accepted;
      }
      if (decidesNow) {
        await tx.job.update({ where: { id: job.id }, data: { tasksDone: { increment: 1 } }, select: { id: true } });
        if (copies.length === 1) taskRow.agreedOwners = agreedOwners;
        else await tx.task.updateMany({ where: { jobId: job.id, index: task.index }, data: { agreedOwners } });
      }
      if (measure) await recordMeasure(market, tx, job, machine, measure);
    }
    if (taskFails) {
      // The program's own failure: every run that failed so is paid from the job's escrow, within
      // the task's share of the quote (the engine's failurePieces).
      const runs = failures.filter((f) => f.code === confirmed);
      const amounts = failurePieces(runs.map((f) => f.pieceMicro), taskShare(job));
      for (const [i, f] of runs.entries()) {
        const resultId = f.resultId || result.id;
        await pay.piece({ resultId, taskId: task.id, producerId: f.owner, machineId: f.machineId, amount: amounts[i]!, of: "failure" });
        await tx.result.update({ where: { id: resultId }, data: { failureConfirmed: true, paidMicro: amounts[i]! }, select: { id: true } });
      }
      await tx.task.updateMany({ where: { jobId: job.id, index: task.index }, data: { status: "failed", machineId: null } });
    }
    if (Object.keys(taskRow).length) await tx.task.update({ where: { id: task.id }, data: taskRow, select: { id: true } });
    const factsApply = await facts.write(market, tx);
    if (addCopy && !givesUp) await runStatement(viaPrisma(tx), addTaskCopy, { fromTaskId: task.id, copyId: addCopy.id, replica: addCopy.replica });
    if (finishesJob && !atLimit) await finishJob(market, tx, job.id, now);
    else if (pay.exhausted || atLimit) await failJob(market, tx, job.id, task, c, now, "escrow-exhausted");
    else if (givesUp) await failJob(market, tx, job.id, task, c, now, stopsOnFailures ? "failure-limit" : null);
    const ends = finishesJob || pay.exhausted || atLimit || givesUp;
    return {
      requeue: !ends && requeueThese.length ? await planRequeue(market, tx, requeueThese) : null,
      factsApply,
      copyAdded: !ends && addCopy !== null,
      resultId: result.id,
      exhausted: pay.exhausted || atLimit,
      ends,
      paid: pay.paid,
      held: pay.held,
    };
  };
  let counted = false;
  let paidHere = 0n;
  /** With what a plain row pays from the escrow (`paid`), which the job's settlement later in the group counts too. */
  const count = (paid = 0n) => {
    if (!decidesNow || counted) return;
    job.tasksDone += 1;
    counted = true;
    job.paidMicro += paid;
    paidHere = paid;
  };
  const uncount = () => {
    if (!counted) return;
    job.tasksDone -= 1;
    counted = false;
    job.paidMicro -= paidHere;
    paidHere = 0n;
  };
  const apply = ({
    requeue,
    resultId,
    exhausted,
    paid = 0n,
    held = 0n,
    factsApply,
    copyAdded = false,
  }: {
    requeue: Awaited<ReturnType<typeof planRequeue>> | null;
    resultId: string;
    exhausted: boolean;
    paid?: bigint;
    held?: bigint;
    factsApply?: () => void;
    copyAdded?: boolean;
  }) => {
    factsApply?.();
    for (const o of forgers) forfeited.add(o);
    if (copyAdded && addCopy) {
      // Waiting for a machine: the sweeper places it (market/sweeper.ts).
      const added: LiveTask = { id: addCopy.id, jobId: job.id, index: task.index, replica: addCopy.replica, bytes: task.bytes, machineId: null, state: "pending", attempts: 0 };
      market.state.tasks.set(added.id, added);
      job.copiesAdded = true;
      market.state.enqueue(added, null);
    }
    if (c.late) market.state.lateLeases.delete(lease.id);
    else market.state.leases.delete(lease.id);
    machine.leases.delete(lease.id);
    if (c.ok) {
      if (c.late && decidesNow) market.state.unqueue(task);
      taskDone(market, task, machine, { resultId, outputHash: c.hash, seconds: c.report.elapsedMs / 1000 }, now);
      task.pieceMicro = pieceMicro;
    }
    job.paidMicro += paid;
    job.heldMicro += held;
    if (agreed) for (const t of copies) t.agreedHash = agreed;
    if (decidesNow) {
      (job.decided ??= []).push(task.index);
      task.failures = undefined;
      market.state.forgetLate(task.id);
      market.state.rerunsElsewhere.delete(task.id);
    }
    if (failure && !taskFails) {
      task.failures = [...(task.failures ?? []), { ...failure, resultId }];
      market.state.rerunsElsewhere.add(task.id);
    }
    if (taskFails) {
      job.failedTasks += 1;
      for (const t of copies) {
        market.state.unqueue(t);
        market.engine.taskDropped(t.id);
        t.state = "failed";
        t.failures = undefined;
        market.state.rerunsElsewhere.delete(t.id);
      }
      market.state.forgetLate(task.id);
    }
    count();
    if (requeue) {
      for (const t of requeueThese) {
        t.machineId = null;
        t.outputHash = undefined;
        t.attempts = Math.max(t.attempts, task.attempts);
      }
      requeue.apply();
    }
    if (finishesJob || givesUp || exhausted) jobEnded(market, job.id);
    market.emit({ kind: "job", jobId: job.id, ownerId: job.ownerId });
  };
  // A job's last run settles it in the group's statement only when its result is the count of its
  // outputs: an example's picture or estimate is assembled from them by finishJob.
  const plain = !plainRun ? null : !finishesJob ? { now, agreedOwners, job, settles: false, pieceMicro, measure } : job.example === null ? { now, agreedOwners, job, settles: true, pieceMicro, measure } : null;
  return { write, apply, count, uncount, plain };
}

/**
 * A late result accepted as its task's first: the run the expiry placed again is withdrawn, its
 * lease abandoned (its machine's report will be refused as stale) or its queued task taken back.
 */
async function withdrawRerun(market: Market, tx: Tx, task: LiveTask, now: number) {
  const others = market.state.leases.ofTask(task.id).map((l) => l.id);
  if (others.length) await tx.lease.updateMany({ where: { id: { in: others }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
}

/** A run's work sample and, where it measured the machine, its speed, written with its result. */
async function recordMeasure(market: Market, tx: Tx, job: LiveJob, machine: LiveMachine, m: RunMeasure) {
  if (m.sample !== null) {
    await runStatement(viaPrisma(tx), addWorkSample, { jobId: job.id, samples: JSON.stringify([m.sample]), workPerTask: m.workPerTask });
    job.workSamples.push(m.sample);
    job.workPerTask = m.workPerTask;
  }
  if (m.speed !== null) {
    await tx.machine.update({ where: { id: machine.id }, data: { speed: m.speed }, select: { id: true } });
    machine.speed = m.speed;
    machineChanged(market, machine);
  }
}

/**
 * Pays pieces of one job within one transaction: from its escrow as far as the escrow holds more
 * than the late runs' held pieces, from the market's account for the rest (entries.ts `piece`). A
 * job whose measured work contradicted its estimate is stopped when its escrow no longer covers a
 * piece (`exhausted`): the consumer's maxSpend is reached; the piece itself is paid in full, as
 * its lease promised.
 */
class PiecePayer {
  exhausted = false;
  /** Paid from the escrow by this transaction, and held in it for lateness (late results). */
  paid = 0n;
  held = 0n;
  private free: bigint | null = null;

  constructor(
    private market: Market,
    private tx: Tx,
    private job: LiveJob,
  ) {}

  private async escrowFree(): Promise<bigint> {
    if (this.free !== null) return this.free;
    const inEscrow = await balance(this.tx, { kind: "escrow", jobId: this.job.id });
    const [row] = await runStatement(viaPrisma(this.tx), heldForJob, { jobId: this.job.id });
    return (this.free = inEscrow - BigInt(row?.held ?? 0));
  }

  /** `fromMarket`: the part of `amount` the market's account pays whatever the escrow holds (a contest's copies, contestPieces). */
  async piece(p: { resultId: string; taskId: string; producerId: string; machineId: string; amount: bigint; of: "result" | "failure" | "pilot"; fromMarket?: bigint }) {
    const free = await this.escrowFree();
    const { fromMarket: forced = 0n, ...rest } = p;
    const split = splitPiece(this.market, this.job, p.amount - forced, free);
    if (split.exhausted) this.exhausted = true;
    this.free = free - split.fromEscrow;
    this.paid += split.fromEscrow;
    if (p.amount === 0n) return;
    await post(this.tx, piece({ ...rest, jobId: this.job.id, fromEscrow: split.fromEscrow, fromMarket: split.fromMarket + forced }));
  }

  /** A late result's piece stays in the escrow, held for the job's lateness (settled with the job). */
  async hold(resultId: string, amount: bigint) {
    this.held += amount;
    await this.tx.result.update({ where: { id: resultId }, data: { heldMicro: amount }, select: { id: true } });
  }
}

/**
 * What a task's copies not judged now were leased for (the consumer's, where known) and what all
 * its copies were paid or have held so far, read in the report's transaction: a copy judged after
 * its task was decided is paid only from what the task's budget still holds (copyPieces).
 */
async function earlierCopies(tx: Tx, job: LiveJob, task: LiveTask, others: readonly LiveTask[]): Promise<EarlierCopies> {
  const leased = others.reduce((sum, t) => sum + (t.replica < job.replicas && t.pieceMicro !== undefined ? t.pieceMicro : 0n), 0n);
  const where = { lease: { task: { jobId: job.id, index: task.index } } };
  const sums = await tx.result.aggregate({ _sum: { paidMicro: true, heldMicro: true }, where });
  return { leased, paid: (sums._sum.paidMicro ?? 0n) + (sums._sum.heldMicro ?? 0n) };
}

/**
 * Accepts a copy whose output is the quorum's and pays it `amount` (copyPieces). Returns the
 * accepted result's id; the task row of the copy being reported (`own`) is left to the caller,
 * which writes it once.
 */
async function judge(
  market: Market,
  tx: Tx,
  pay: PiecePayer,
  copy: LiveTask,
  result: { id: string; hash: string; machine?: LiveMachine },
  agrees: boolean,
  own: boolean,
  late: boolean,
  amount: bigint,
  fromMarket = 0n,
): Promise<string | null> {
  // The report in hand says who ran it; an earlier copy's result is read back.
  const row = result.machine ? { id: result.id, machineId: result.machine.id, ownerId: result.machine.ownerId } : await tx.lease.findUniqueOrThrow({ where: { id: result.id }, select: { id: true, machineId: true, machine: { select: { ownerId: true } } } }).then((r) => ({ id: r.id, machineId: r.machineId, ownerId: r.machine.ownerId }));
  if (agrees) {
    if (!own) await tx.task.update({ where: { id: copy.id }, data: { acceptedResultId: row.id }, select: { id: true } });
    const job = market.state.jobs.get(copy.jobId)!;
    const of = job.pilots?.phase === "provisional" && copy.index < job.pilots.count ? "pilot" : "result";
    // A late run's piece is held in the escrow for the job's lateness: the market adds nothing to it.
    if (late) await pay.hold(row.id, amount - fromMarket);
    else await pay.piece({ resultId: row.id, taskId: copy.id, producerId: row.ownerId, machineId: row.machineId, amount, of, fromMarket });
    await tx.result.update({ where: { id: row.id }, data: { accepted: true, ...(late ? {} : { paidMicro: amount }) }, select: { id: true } });
  }
  return agrees ? row.id : null;
}

async function finishJob(market: Market, tx: Tx, jobId: string, now: number) {
  const job = market.state.jobs.get(jobId)!;
  // Each task's accepted output in task order, in one statement: the model queries' per-row work
  // for a job of thousands of tasks showed in the profile.
  const outputs = await runStatement(viaPrisma(tx), acceptedStdouts, { jobId });
  const texts = outputs.map((o) => (o.stdout ? Buffer.from(o.stdout).toString("utf8") : ""));
  const charged = await timedSettlement(market, "completed", () => settleCompleted(tx, market, job, now));
  await tx.job.update({
    where: { id: jobId },
    data: { status: "completed", completedAt: new Date(now), chargedMicro: charged, result: toJson(combineOutputs(job.example, texts)) },
  });
  // Copies still running when the quorum was reached: their leases end with the job (jobEnded
  // forgets them), here and now, as a failed job's do; no later departure looks them up by machine.
  const running = [...market.state.leases.values()].filter((l) => market.state.tasks.get(l.taskId)?.jobId === jobId).map((l) => l.id);
  if (running.length) await tx.lease.updateMany({ where: { id: { in: running }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
}

async function failJob(market: Market, tx: Tx, jobId: string, task: LiveTask, c: Completion, now: number, why: "escrow-exhausted" | "failure-limit" | null = null) {
  const job = market.state.jobs.get(jobId)!;
  await tx.task.updateMany({ where: { jobId, status: { in: ["pending", "queued", "leased"] } }, data: { status: "failed", machineId: null } });
  await tx.lease.updateMany({ where: { task: { jobId }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
  const settledAs = why === "escrow-exhausted" ? "escrow-exhausted" : "failed";
  const charged = await timedSettlement(market, settledAs, () => settleUnfinished(tx, { jobId, consumerId: job.ownerId, why: settledAs }));
  const cause = why === "failure-limit" ? "failure-limit" : c.ok ? "no-quorum" : failureCode(c.report);
  await tx.job.update({
    where: { id: jobId },
    data: {
      status: "failed",
      completedAt: new Date(now),
      chargedMicro: charged,
      result: toJson({
        error: reasonOf(
          why === "escrow-exhausted"
            ? { code: "escrow-exhausted", escrow: toCredits(job.escrowMicro), paidToProducers: toCredits(charged), taskIndex: task.index }
            : { code: "task-failed", cause, taskIndex: task.index, attempts: task.attempts, exitCode: c.report.exitCode, stderr: c.stderr.toString("utf8").slice(0, 2000) },
        ),
      }),
    },
  });
}
