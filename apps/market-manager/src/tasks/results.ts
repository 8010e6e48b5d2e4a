import type { Market } from "../market/market.ts";
import type { LiveLease, LiveMachine, LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import type { TaskReport } from "../resources/leases.ts";
import { combineOutputs } from "./examples.ts";
import { forgetJob } from "./cancel.ts";
import { toBytes, toJson } from "../db/client.ts";
import { benefitAt, type BenefitCurve } from "@cyclemarket/costbenefit";
import { toMicro } from "../ledger/ledger.ts";
import { payProducer, settleCompleted, settleUnfinished } from "../ledger/settlement.ts";

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

/**
 * Records a reported run. A successful run finishes its task (and the job with its last task);
 * a failed one sends the task back to the engine until it has failed `maxAttempts` times.
 */
export async function completeTask(market: Market, c: Completion) {
  const { task, lease, machine } = c;
  const job = market.state.jobs.get(task.jobId)!;
  const now = market.clock.now();
  const finishesJob = c.ok && job.tasksDone + 1 >= job.taskCount;
  const givesUp = !c.ok && task.attempts >= market.settings.maxAttempts;

  const requeue = await market.db.$transaction(async (tx) => {
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
        accepted: c.ok,
        createdAt: new Date(now),
      },
    });
    await tx.lease.update({ where: { id: lease.id }, data: { status: "completed", endedAt: new Date(now) } });
    if (c.ok) {
      await tx.task.update({
        where: { id: task.id },
        data: { status: "done", acceptedResultId: result.id, completedAt: new Date(now) },
      });
      await tx.job.update({ where: { id: job.id }, data: { tasksDone: { increment: 1 } } });
      // seed 003, 5.5.2: an opportunistic machine is paid cps(m) for each second of successful use.
      const seconds = Math.max(0, c.report.elapsedMs) / 1000;
      // Dedicated machines were paid their contract when the market bought their time.
      if (machine.kind === "opportunistic") await payProducer(tx, {
        resultId: result.id,
        jobId: job.id,
        taskId: task.id,
        producerId: machine.ownerId,
        machineId: machine.id,
        amount: (machine.pricePerSecondMicro * BigInt(Math.round(c.report.elapsedMs))) / 1000n,
        seconds,
      });
      if (finishesJob) {
        const outputs = await tx.task.findMany({
          where: { jobId: job.id },
          orderBy: { index: "asc" },
          select: { results: { where: { accepted: true }, select: { stdout: true }, take: 1 } },
        });
        const texts = outputs.map((o) => Buffer.from(o.results[0]?.stdout ?? []).toString("utf8"));
        const took = (now - job.arrivedAt) / 1000;
        const charged = await settleCompleted(tx, {
          jobId: job.id,
          consumerId: job.ownerId,
          benefit: toMicro(benefitAt(job.benefit as BenefitCurve, took)),
          seconds: took,
        });
        await tx.job.update({
          where: { id: job.id },
          data: { status: "completed", completedAt: new Date(now), chargedMicro: charged, result: toJson(combineOutputs(job.example, texts)) },
        });
      }
      return null;
    }
    if (givesUp) {
      await tx.task.update({ where: { id: task.id }, data: { status: "failed" } });
      const charged = await settleUnfinished(tx, { jobId: job.id, consumerId: job.ownerId, why: "failed" });
      await tx.job.update({
        where: { id: job.id },
        data: {
          status: "failed",
          completedAt: new Date(now),
          chargedMicro: charged,
          result: { error: { code: "task-failed", taskIndex: task.index, attempts: task.attempts, exitCode: c.report.exitCode, cause: c.report.error?.code ?? null, stderr: c.stderr.toString("utf8").slice(0, 2000) } },
        },
      });
      await tx.task.updateMany({ where: { jobId: job.id, status: { in: ["pending", "queued", "leased"] } }, data: { status: "failed", machineId: null } });
      await tx.lease.updateMany({ where: { task: { jobId: job.id }, status: "active" }, data: { status: "abandoned", endedAt: new Date(now) } });
      return null;
    }
    return planRequeue(market, tx, [task]);
  });

  market.state.leases.delete(lease.id);
  machine.leases.delete(lease.id);
  if (c.ok) {
    task.state = "done";
    job.tasksDone += 1;
    market.engine.taskFinished(task.id, machine.id, c.report.elapsedMs / 1000, now);
  } else if (requeue) {
    task.machineId = null;
    requeue.apply();
  }
  if (finishesJob || givesUp) forgetJob(market, job.id);
  market.emit({ kind: "job", jobId: job.id, ownerId: job.ownerId });
}
