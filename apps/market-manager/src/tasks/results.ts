import type { Market } from "../market/market.ts";
import type { LiveLease, LiveMachine, LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import type { TaskReport } from "../resources/leases.ts";
import { combineOutputs } from "./examples.ts";
import { forgetJob } from "./cancel.ts";
import { toBytes, toJson } from "../db/client.ts";
import { benefitAt, type BenefitCurve } from "@cyclemarket/costbenefit";
import { toMicro, type Tx } from "../ledger/ledger.ts";
import { payProducer, settleCompleted, settleUnfinished } from "../ledger/settlement.ts";
import { refine } from "../resources/refine.ts";

interface Completion {
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
const REPUTATION_REWARD = 0.02;

/**
 * Records a reported run. A task with k copies is done when a majority of its copies agree on
 * the output hash (k = 1: its one successful run); agreeing copies are accepted and paid,
 * disagreeing ones are not paid and their machines lose reputation. A failed run, or copies that
 * all ran without a majority, go back to the engine until `maxAttempts`; then the job fails.
 */
export async function completeTask(market: Market, c: Completion) {
  const { task, lease, machine } = c;
  const job = market.state.jobs.get(task.jobId)!;
  const now = market.clock.now();
  const copies = market.state.copies(task);
  const quorum = Math.floor(job.replicas / 2) + 1;

  // Decide from memory what this report does, then make it so in one transaction.
  const decidedBefore = copies.find((t) => t.agreedHash)?.agreedHash ?? null;
  let agreed = decidedBefore;
  let rerun: LiveTask[] = [];
  if (c.ok && !agreed) {
    const votes = new Map<string, number>();
    for (const t of copies) if (t !== task && t.state === "done" && t.outputHash) votes.set(t.outputHash, (votes.get(t.outputHash) ?? 0) + 1);
    votes.set(c.hash, (votes.get(c.hash) ?? 0) + 1);
    agreed = [...votes].find(([, n]) => n >= quorum)?.[0] ?? null;
    const stillRunning = copies.some((t) => t !== task && t.state !== "done");
    if (!agreed && !stillRunning) rerun = copies; // every copy ran and no majority agrees
  }
  const decidesNow = !decidedBefore && agreed !== null;
  const finishesJob = decidesNow && job.tasksDone + 1 >= job.taskCount;
  const failedRun = !c.ok;
  const givesUp = (failedRun || rerun.length > 0) && task.attempts >= market.settings.maxAttempts;
  const requeueThese = givesUp ? [] : failedRun ? [task] : rerun;

  const { requeue, resultId } = await market.db.$transaction(async (tx) => {
    const result = await tx.result.create({
      data: {
        taskId: task.id,
        leaseId: lease.id,
        machineId: machine.id,
        exitCode: c.report.exitCode,
        stdout: toBytes(c.stdout),
        stderr: toBytes(c.stderr),
        outputHash: c.hash,
        elapsedMs: Math.max(0, Math.round(c.report.elapsedMs)),
        error: c.report.error ? toJson(c.report.error) : undefined,
        createdAt: new Date(now),
      },
    });
    await tx.lease.update({ where: { id: lease.id }, data: { status: "completed", endedAt: new Date(now) } });
    if (c.ok) await tx.task.update({ where: { id: task.id }, data: { status: "done", completedAt: new Date(now) } });

    if (agreed) {
      // The copies that now stand judged: all done copies when the quorum is reached now, this
      // one alone when it arrives after the quorum.
      const judged = decidesNow ? copies.filter((t) => t === task || t.state === "done") : [task];
      for (const t of judged) {
        const r = t === task ? { id: result.id, hash: c.hash } : { id: t.resultId!, hash: t.outputHash! };
        await judge(market, tx, t, r, r.hash === agreed);
      }
      if (decidesNow) await tx.job.update({ where: { id: job.id }, data: { tasksDone: { increment: 1 } } });
      await refine(market, tx, machine, job, c.report.elapsedMs / 1000);
    }
    if (finishesJob) await finishJob(market, tx, job.id, now);
    if (givesUp) await failJob(market, tx, job.id, task, c, now);
    return { requeue: requeueThese.length ? await planRequeue(market, tx, requeueThese) : null, resultId: result.id };
  });

  market.state.leases.delete(lease.id);
  machine.leases.delete(lease.id);
  if (c.ok) {
    Object.assign(task, { state: "done", resultId, outputHash: c.hash });
    market.engine.taskFinished(task.id, machine.id, c.report.elapsedMs / 1000, now);
  }
  if (agreed) for (const t of copies) t.agreedHash = agreed;
  if (decidesNow) job.tasksDone += 1;
  if (requeue) {
    for (const t of requeueThese) {
      t.machineId = null;
      t.outputHash = undefined;
      t.attempts = Math.max(t.attempts, task.attempts);
    }
    requeue.apply();
  }
  if (finishesJob || givesUp) forgetJob(market, job.id);
  market.emit({ kind: "job", jobId: job.id, ownerId: job.ownerId });
}

/** Accepts and pays a copy whose output is the quorum's, or marks its machine down. */
async function judge(market: Market, tx: Tx, copy: LiveTask, result: { id: string; hash: string }, agrees: boolean) {
  const row = await tx.result.findUniqueOrThrow({ where: { id: result.id }, include: { machine: true } });
  const m = row.machine;
  if (agrees) {
    await tx.result.update({ where: { id: row.id }, data: { accepted: true } });
    await tx.task.update({ where: { id: copy.id }, data: { acceptedResultId: row.id } });
    // seed 003, 5.5.2: an opportunistic machine is paid cps(m) for each second of successful use;
    // dedicated machines were paid their contract when the market bought their time.
    if (m.kind === "opportunistic") {
      await payProducer(tx, {
        resultId: row.id,
        jobId: copy.jobId,
        taskId: copy.id,
        producerId: m.ownerId,
        machineId: m.id,
        amount: (m.pricePerSecondMicro * BigInt(row.elapsedMs)) / 1000n,
        seconds: row.elapsedMs / 1000,
      });
    }
  }
  const reputation = agrees ? Math.min(1, m.reputation + REPUTATION_REWARD) : m.reputation * REPUTATION_PENALTY;
  if (reputation !== m.reputation) {
    await tx.machine.update({ where: { id: m.id }, data: { reputation } });
    const live = market.state.machines.get(m.id);
    if (live) {
      live.reputation = reputation;
      market.engine.addMachine(live, market.clock.now());
    }
  }
}

async function finishJob(market: Market, tx: Tx, jobId: string, now: number) {
  const job = market.state.jobs.get(jobId)!;
  const outputs = await tx.task.findMany({
    where: { jobId, replica: 0 },
    orderBy: { index: "asc" },
    select: { index: true },
  });
  const accepted = await tx.result.findMany({
    where: { task: { jobId }, accepted: true },
    select: { stdout: true, task: { select: { index: true } } },
  });
  const byIndex = new Map(accepted.map((r) => [r.task.index, Buffer.from(r.stdout).toString("utf8")]));
  const texts = outputs.map((o) => byIndex.get(o.index) ?? "");
  const took = (now - job.arrivedAt) / 1000;
  const charged = await settleCompleted(tx, {
    jobId,
    consumerId: job.ownerId,
    benefit: toMicro(benefitAt(job.benefit as BenefitCurve, took)),
    seconds: took,
  });
  await tx.job.update({
    where: { id: jobId },
    data: { status: "completed", completedAt: new Date(now), chargedMicro: charged, result: toJson(combineOutputs(job.example, texts)) },
  });
}

async function failJob(market: Market, tx: Tx, jobId: string, task: LiveTask, c: Completion, now: number) {
  const job = market.state.jobs.get(jobId)!;
  await tx.task.updateMany({ where: { jobId, status: { in: ["pending", "queued", "leased"] } }, data: { status: "failed", machineId: null } });
  await tx.lease.updateMany({ where: { task: { jobId }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
  const charged = await settleUnfinished(tx, { jobId, consumerId: job.ownerId, why: "failed" });
  const cause = c.ok ? "no-quorum" : (c.report.error?.code ?? "nonzero-exit");
  await tx.job.update({
    where: { id: jobId },
    data: {
      status: "failed",
      completedAt: new Date(now),
      chargedMicro: charged,
      result: toJson({
        error: { code: "task-failed", cause, taskIndex: task.index, attempts: task.attempts, exitCode: c.report.exitCode, stderr: c.stderr.toString("utf8").slice(0, 2000) },
      }),
    },
  });
}
