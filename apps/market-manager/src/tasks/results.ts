import type { Market } from "../market/market.ts";
import { timedSettlement } from "../ops/ops.ts";
import type { LiveJob, LiveLease, LiveMachine, LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import type { TaskReport } from "./task-report.ts";
import { combineOutputs } from "./examples.ts";
import { jobEnded, machineChanged, taskDone } from "../market/transitions.ts";
import { toBytes, toJson } from "../db/client.ts";
import { benefitAt, estimateContradicted, runPay, settleCharge, tallyCopies, type BenefitCurve } from "@cyclemarket/costbenefit";
import { balance, toCredits, toMicro, type Tx } from "../ledger/ledger.ts";
import { payRun, paidForJob, settleCompleted, settleUnfinished, type CompletedSettlement } from "../ledger/settlement.ts";
import { refine } from "../resources/refine.ts";
import { shortId } from "@cyclemarket/client/job-file";

export interface Completion {
  machine: LiveMachine;
  lease: LiveLease;
  task: LiveTask;
  ok: boolean;
  stdout: Buffer;
  stderr: Buffer;
  hash: string;
  report: TaskReport;
}

/** A machine whose output disagrees with the quorum loses half its reputation. */
const REPUTATION_PENALTY = 0.5;
export const REPUTATION_REWARD = 0.02;

/** Reports elapsed times as a whole number of milliseconds the database can hold, whatever was claimed. */
export const storedMs = (ms: number) => (Number.isFinite(ms) ? Math.min(2_000_000_000, Math.max(0, Math.round(ms))) : 0);

/**
 * Records a reported run. A task with k copies is done when copies from a majority of k different
 * owners agree on the output hash (k = 1: its one successful run); agreeing copies are accepted
 * and paid, disagreeing ones are not paid and their machines lose reputation. A failed run is
 * paid for the time the market vouches for and goes back to the engine, as do copies that all ran
 * without a majority, until `maxAttempts`; then the job fails. Every payment comes out of the
 * job's escrow; a job whose escrow runs out stops and is settled.
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
  const copies = market.state.copies(task);

  // Decide from memory what this report does (the engine's quorum rule), then make it so in one transaction.
  const decidedBefore = copies.find((t) => t.agreedHash)?.agreedHash ?? null;
  let agreed = decidedBefore;
  let agreedOwners = 0;
  let rerun: LiveTask[] = [];
  if (c.ok && !agreed) {
    const votes = copies.filter((t) => t !== task && t.state === "done" && t.outputHash).map((t) => ({ hash: t.outputHash!, owner: t.producerId ?? t.machineId ?? t.id }));
    votes.push({ hash: c.hash, owner: machine.ownerId });
    const tally = tallyCopies(votes, job.replicas, copies.some((t) => t !== task && t.state !== "done"));
    agreed = tally.agreed;
    agreedOwners = tally.owners;
    if (tally.rerun) rerun = copies; // every copy ran and no majority of owners agrees
  }
  const decidesNow = !decidedBefore && agreed !== null;
  const finishesJob = decidesNow && job.tasksDone + 1 >= job.taskCount;
  const failedRun = !c.ok;
  const givesUp = (failedRun || rerun.length > 0) && task.attempts >= market.settings.maxAttempts;
  const requeueThese = givesUp ? [] : failedRun ? [task] : rerun;
  // The run that decides a task without copies: its rows are the same for every such report, so a
  // group writes them many to a statement (report-rows.ts). The job's last one settles the job in
  // that statement too, when memory knows what the job's producers were paid (every run of it was
  // paid by such rows) and its result is the count of its outputs (an example's picture is
  // assembled from them by finishJob). Its other tasks are all decided then, and a task without
  // copies has no run out once decided, so no lease of the job is left to end.
  const plainRun = c.ok && copies.length === 1 && decidesNow && !givesUp && agreed === c.hash;
  const settles = plainRun && finishesJob && job.paidMicro !== undefined && job.example === null;

  const write = async (tx: Tx) => {
    const pay = new RunPayer(market, tx, job.id);
    const result = await tx.result.create({
      data: {
        taskId: task.id,
        leaseId: lease.id,
        machineId: machine.id,
        exitCode: c.report.exitCode,
        stdout: toBytes(c.stdout),
        stderr: toBytes(c.stderr),
        outputHash: c.hash,
        elapsedMs: storedMs(c.report.elapsedMs),
        error: c.report.error ? toJson(c.report.error) : undefined,
        createdAt: new Date(now),
      },
      select: { id: true },
    });
    // The lease of this task on this machine, or the transaction fails: a result row has no foreign
    // keys (migration 20261124081500_result_rows_unchecked), this update proves its parents exist.
    await tx.lease.update({ where: { id: lease.id, taskId: task.id, machineId: machine.id }, data: { status: "completed", endedAt: new Date(now) }, select: { id: true } });
    // This task's row changes once, at the end, with everything this report decides about it.
    const taskRow: { status?: "done"; completedAt?: Date; acceptedResultId?: string; agreedOwners?: number } = c.ok ? { status: "done", completedAt: new Date(now) } : {};

    if (agreed) {
      // The copies that now stand judged: all done copies when the quorum is reached now, this
      // one alone when it arrives after the quorum.
      const judged = decidesNow ? copies.filter((t) => t === task || t.state === "done") : [task];
      for (const t of judged) {
        const r = t === task ? { id: result.id, hash: c.hash, machine, elapsedMs: storedMs(c.report.elapsedMs) } : { id: t.resultId!, hash: t.outputHash! };
        const accepted = await judge(market, tx, pay, t, r, r.hash === agreed, t === task);
        if (accepted && t === task) taskRow.acceptedResultId = accepted;
      }
      if (decidesNow) {
        await tx.job.update({ where: { id: job.id }, data: { tasksDone: { increment: 1 } }, select: { id: true } });
        if (copies.length === 1) taskRow.agreedOwners = agreedOwners;
        else await tx.task.updateMany({ where: { jobId: job.id, index: task.index }, data: { agreedOwners } });
      }
      await refine(market, tx, machine, job, c.report.elapsedMs / 1000);
    }
    if (Object.keys(taskRow).length) await tx.task.update({ where: { id: task.id }, data: taskRow, select: { id: true } });
    // seed 003, 5.5.2 pays successful use; a failed run used the producer's time all the same,
    // so it is paid for what the market vouches for and charged to the consumer (the quote says so).
    if (failedRun) await pay.run(machine, task, result.id, c.report.elapsedMs, true);
    if (finishesJob) await finishJob(market, tx, job.id, now);
    else if (pay.exhausted) await failJob(market, tx, job.id, task, c, now, "escrow-exhausted");
    else if (givesUp) await failJob(market, tx, job.id, task, c, now);
    const ends = finishesJob || pay.exhausted || givesUp;
    return { requeue: !ends && requeueThese.length ? await planRequeue(market, tx, requeueThese) : null, resultId: result.id, exhausted: pay.exhausted, ends };
  };
  let counted = false;
  let paidHere = 0n;
  /** With what a plain row pays (`paid`), which the job's settlement later in the group counts too. */
  const count = (paid = 0n) => {
    if (!decidesNow || counted) return;
    job.tasksDone += 1;
    counted = true;
    if (job.paidMicro !== undefined) (job.paidMicro += paid), (paidHere = paid);
  };
  const uncount = () => {
    if (!counted) return;
    job.tasksDone -= 1;
    counted = false;
    if (job.paidMicro !== undefined) job.paidMicro -= paidHere;
    paidHere = 0n;
  };
  const apply = ({ requeue, resultId, exhausted }: Awaited<ReturnType<typeof write>>) => {
    market.state.leases.delete(lease.id);
    machine.leases.delete(lease.id);
    if (c.ok) {
      taskDone(market, task, machine, { resultId, outputHash: c.hash, seconds: c.report.elapsedMs / 1000 }, now);
    }
    if (agreed) for (const t of copies) t.agreedHash = agreed;
    if (decidesNow) (job.decided ??= []).push(task.index);
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
  const plain = plainRun && (!finishesJob || settles) ? { now, agreedOwners, job, settles } : null;
  return { write, apply, count, uncount, plain };
}

type PaidMachine = { id: string; ownerId: string; kind: string; speed: number; pricePerSecondMicro: bigint; reputation: number };

/** The engine's `runPay` for one run of `job` on `m`, with `escrowMicro` in the job's escrow now. */
export function quoteRun(market: Market, job: LiveJob, m: PaidMachine, elapsedMs: number, escrowMicro: bigint) {
  const p = runPay(market.settings.terms, {
    reportedSeconds: elapsedMs / 1000,
    workPerTask: job.workPerTask,
    speed: m.speed,
    // Dedicated machines are paid by their contract, not per run.
    pricePerSecond: m.kind === "opportunistic" ? toCredits(m.pricePerSecondMicro) : 0,
    wallSeconds: job.wallMs / 1000,
    escrowLeft: toCredits(escrowMicro - job.penaltyHeldMicro),
  });
  return { p, amount: toMicro(p.amount) };
}

/**
 * Pays runs of one job out of its escrow, within one transaction, by the engine's `runPay`: the
 * seconds the machine's benchmark allows, never more than the escrow holds. A report past the cap
 * is flagged on its result and halves the machine's reputation; an escrow that cannot cover a run
 * marks the job exhausted, and it stops.
 */
class RunPayer {
  exhausted = false;
  constructor(
    private market: Market,
    private tx: Tx,
    private jobId: string,
  ) {}

  async run(m: PaidMachine, copy: LiveTask, resultId: string, elapsedMs: number, failed: boolean, accepted = false) {
    const job = this.market.state.jobs.get(this.jobId)!;
    // Paid here, in a transaction memory does not follow: what the job's producers were paid is no longer known in memory.
    job.paidMicro = undefined;
    const escrow = await balance(this.tx, { kind: "escrow", jobId: this.jobId });
    const { p, amount } = quoteRun(this.market, job, m, elapsedMs, escrow);
    if (m.kind === "opportunistic") {
      await payRun(this.tx, {
        resultId,
        jobId: this.jobId,
        taskId: copy.id,
        producerId: m.ownerId,
        machineId: m.id,
        amount,
        seconds: p.paidSeconds,
        reportedSeconds: elapsedMs / 1000,
        failed,
      });
    }
    await this.tx.result.update({ where: { id: resultId }, data: { paidMicro: amount, implausible: p.implausible, ...(accepted ? { accepted: true } : {}) }, select: { id: true } });
    if (p.implausible) {
      await setReputation(this.market, this.tx, m, m.reputation * REPUTATION_PENALTY);
      this.market.log(`machine ${shortId(m.id)} reported ${(elapsedMs / 1000).toFixed(1)} s for a run its speed allows ${p.capSeconds.toFixed(1)} s; paid at the cap`);
    }
    if (p.escrowExhausted) this.exhausted = true;
  }
}

/**
 * Accepts and pays a copy whose output is the quorum's, or marks its machine down. Returns the
 * accepted result's id; the task row of the copy being reported (`own`) is left to the caller,
 * which writes it once.
 */
async function judge(
  market: Market,
  tx: Tx,
  pay: RunPayer,
  copy: LiveTask,
  result: { id: string; hash: string; machine?: LiveMachine; elapsedMs?: number },
  agrees: boolean,
  own: boolean,
): Promise<string | null> {
  // The report in hand says who ran it and for how long; an earlier copy's result is read back.
  const row =
    result.machine && result.elapsedMs !== undefined
      ? { id: result.id, machineId: result.machine.id, elapsedMs: result.elapsedMs, machine: result.machine }
      : await tx.result.findUniqueOrThrow({ where: { id: result.id }, include: { machine: true } });
  const m = market.state.machines.get(row.machineId) ?? row.machine;
  if (agrees) {
    if (!own) await tx.task.update({ where: { id: copy.id }, data: { acceptedResultId: row.id }, select: { id: true } });
    await pay.run(m, copy, row.id, row.elapsedMs, false, true);
  }
  const now = market.state.machines.get(row.machineId)?.reputation ?? m.reputation;
  const reputation = agrees ? Math.min(1, now + REPUTATION_REWARD) : now * REPUTATION_PENALTY;
  await setReputation(market, tx, m, reputation);
  return agrees ? row.id : null;
}

async function setReputation(market: Market, tx: Tx, m: { id: string; reputation: number }, reputation: number) {
  const live = market.state.machines.get(m.id);
  if (reputation === (live?.reputation ?? m.reputation)) return;
  await tx.machine.update({ where: { id: m.id }, data: { reputation } });
  if (live) {
    live.reputation = reputation;
    machineChanged(market, live);
  }
}

async function finishJob(market: Market, tx: Tx, jobId: string, now: number) {
  const job = market.state.jobs.get(jobId)!;
  // Each task's accepted output (any accepted copy's: they agree), in task order, in one raw
  // statement: the model queries' per-row work for a job of thousands of tasks showed in the profile.
  const outputs = await tx.$queryRaw<{ stdout: Uint8Array | null }[]>`
    SELECT (SELECT r.stdout FROM "Task" t JOIN "Result" r ON r."taskId" = t.id AND r.accepted
            WHERE t."jobId" = ${jobId} AND t.index = o.index LIMIT 1) AS stdout
    FROM "Task" o WHERE o."jobId" = ${jobId} AND o.replica = 0 ORDER BY o.index`;
  const texts = outputs.map((o) => (o.stdout ? Buffer.from(o.stdout).toString("utf8") : ""));
  const paid = await paidForJob(tx, jobId);
  const charged = await timedSettlement(market, "completed", () => settleCompleted(tx, { jobId, consumerId: job.ownerId, ...completedTerms(market, job, now, paid) }));
  await tx.job.update({
    where: { id: jobId },
    data: { status: "completed", completedAt: new Date(now), chargedMicro: charged, result: toJson(combineOutputs(job.example, texts)) },
  });
  // Copies still running when the quorum was reached: their leases end with the job (jobEnded
  // forgets them), here and now, as a failed job's do; no later departure looks them up by machine.
  const running = [...market.state.leases.values()].filter((l) => market.state.tasks.get(l.taskId)?.jobId === jobId).map((l) => l.id);
  if (running.length) await tx.lease.updateMany({ where: { id: { in: running }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
}

const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);

/** The engine's settlement (settleCharge) of `job` completed at `now`, its producers paid `paid`, as money. */
export function completedTerms(market: Market, job: LiveJob, now: number, paid: bigint): CompletedSettlement {
  const took = (now - job.arrivedAt) / 1000;
  const terms = settleCharge({
    pricing: job.pricing,
    benefit: benefitAt(job.benefit as BenefitCurve, took),
    price: toCredits(job.priceMicro),
    paidToProducers: toCredits(paid),
    consumerEscrow: toCredits(job.escrowMicro),
    penaltyHeld: toCredits(job.penaltyHeldMicro),
    consumerCausedLateness: estimateContradicted(market.settings.terms, job.declaredWorkPerTask, job.workPerTask),
  });
  return {
    // The engine's floats become money once, here; the charge never rounds below what was paid out.
    charge: maxBig(toMicro(terms.charge), paid),
    compensation: toMicro(terms.compensation),
    penaltyHeld: job.penaltyHeldMicro,
    paidToProducers: paid,
    seconds: took,
    memo: terms.reasons,
  };
}

async function failJob(market: Market, tx: Tx, jobId: string, task: LiveTask, c: Completion, now: number, why: "escrow-exhausted" | null = null) {
  const job = market.state.jobs.get(jobId)!;
  await tx.task.updateMany({ where: { jobId, status: { in: ["pending", "queued", "leased"] } }, data: { status: "failed", machineId: null } });
  await tx.lease.updateMany({ where: { task: { jobId }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
  const charged = await timedSettlement(market, why ?? "failed", () => settleUnfinished(tx, { jobId, consumerId: job.ownerId, why: why ?? "failed", penaltyHeld: job.penaltyHeldMicro }));
  const cause = why ?? (c.ok ? "no-quorum" : (c.report.error?.code ?? "nonzero-exit"));
  await tx.job.update({
    where: { id: jobId },
    data: {
      status: "failed",
      completedAt: new Date(now),
      chargedMicro: charged,
      result: toJson({
        error:
          why === "escrow-exhausted"
            ? { code: "escrow-exhausted", escrow: toCredits(job.escrowMicro), paidToProducers: toCredits(charged), taskIndex: task.index }
            : { code: "task-failed", cause, taskIndex: task.index, attempts: task.attempts, exitCode: c.report.exitCode, stderr: c.stderr.toString("utf8").slice(0, 2000) },
      }),
    },
  });
}
