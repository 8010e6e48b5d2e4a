import { BenefitCurve } from "@cyclemarket/costbenefit";
import type { Market } from "./market.ts";
import { demandOf } from "./engine.ts";
import { delayedJobRestored, machineJoined, taskRestored } from "./transitions.ts";
import { liveMachineFromRow } from "../resources/machines.ts";
import { forgiveSilence } from "./sweeper.ts";
import { resumeContract } from "../resources/contracts.ts";
import { leaseLimits } from "../resources/leases.ts";
import { discardUnfinishedIntake } from "../tasks/intake.ts";

/**
 * Rebuilds the live market from PostgreSQL after a start or a crash: machines still active,
 * jobs not finished, their open tasks and leases. Leases that ran out while the Market Manager
 * was down get a fresh timeout (forgiveSilence), like their machines.
 */
export async function restoreMarket(market: Market) {
  const { db, state } = market;
  const machines = await db.machine.findMany({ where: { status: "active" } });
  for (const row of machines) {
    const live = liveMachineFromRow(row);
    machineJoined(market, live);
    await resumeContract(market, live, market.clock.now());
  }
  const interrupted = await discardUnfinishedIntake(db);
  if (interrupted) market.log(`removed ${interrupted} job(s) whose submission was interrupted before the market decided`);
  const jobs = await db.job.findMany({
    where: { status: { in: ["admitted", "running", "delayed"] } },
    include: {
      tasks: {
        where: { status: { in: ["pending", "queued", "leased", "done"] } },
        orderBy: { index: "asc" },
        include: {
          leases: { where: { status: "active" } },
          results: { orderBy: { createdAt: "desc" }, take: 1, select: { id: true, outputHash: true, accepted: true, machine: { select: { ownerId: true } } } },
        },
      },
    },
  });
  for (const job of jobs) {
    state.jobs.set(job.id, {
      id: job.id,
      ownerId: job.ownerId,
      moduleHash: job.moduleHash,
      example: job.example,
      status: job.status as "admitted" | "running" | "delayed",
      taskCount: job.taskCount,
      tasksDone: job.tasksDone,
      workPerTask: job.workPerTask,
      declaredWorkPerTask: job.declaredWorkPerTask ?? job.workPerTask,
      wallMs: leaseLimits(job.taskLimits).wallMs,
      memoryMbPerTask: job.memoryMbPerTask,
      escrowMicro: job.escrowMicro,
      penaltyHeldMicro: job.penaltyHeldMicro,
      priceMicro: job.quotedPriceMicro ?? 0n,
      pricing: job.pricing === "bid" ? "bid" : "posted",
      replicas: job.replicas,
      arrivedAt: job.submittedAt.getTime(),
      // Checked by the schema when the job was submitted; parsed again so memory holds the type.
      benefit: BenefitCurve.parse(job.benefit),
      ...(job.pilotCount === null
        ? {}
        : { pilots: { count: job.pilotCount, priceMicro: job.pilotPriceMicro ?? 0n, phase: job.workEstimate === "measured" ? ("measured" as const) : ("provisional" as const) } }),
    });
    // Tasks after the pilots join the market only when the engine admits them (remainder.ts).
    const held = job.pilotCount !== null && job.workEstimate === "provisional" ? job.pilotCount : Infinity;
    const agreed = new Map<string, string>();
    for (const t of job.tasks) {
      if (t.index >= held) continue;
      const task = { id: t.id, jobId: job.id, index: t.index, replica: t.replica, bytes: t.stdin.length, machineId: null as string | null, state: "pending" as const, attempts: t.attempts };
      state.tasks.set(t.id, task);
      if (t.status === "done") {
        // A copy that ran: it waits for its siblings to reach a quorum, or was judged already.
        const last = t.results[0];
        Object.assign(task, { state: "done", machineId: t.machineId, resultId: last?.id, outputHash: last?.outputHash, producerId: last?.machine.ownerId });
        if (last?.accepted) agreed.set(`${t.index}`, last.outputHash);
        continue;
      }
      const lease = t.leases[0];
      if (t.status === "leased" && lease && state.machines.has(lease.machineId)) {
        taskRestored(market, task, job, { machineId: lease.machineId, lease: { id: lease.id, taskId: t.id, machineId: lease.machineId, expiresAt: lease.expiresAt.getTime() } });
      } else if (t.machineId && state.machines.has(t.machineId) && t.status !== "leased") {
        taskRestored(market, task, job, { machineId: t.machineId });
      }
      // Anything else (its machine departed, its lease lost) stays pending and is placed again.
    }
    for (const t of state.tasks.ofJob(job.id)) {
      if (agreed.has(`${t.index}`)) t.agreedHash = agreed.get(`${t.index}`);
    }
    if (job.status === "delayed") {
      // The engine keeps a delayed job's wait from its arrival: its max-wait rule counts from there.
      // Its tasks as the tick will ask about them: the live ones (a pilot job's pilots alone).
      const live = state.jobs.get(job.id)!;
      const originals = state.tasks.ofJob(job.id).filter((t) => t.replica === 0).map((t) => demandOf(t, live));
      delayedJobRestored(market, { id: job.id, arrivedAt: live.arrivedAt, benefit: live.benefit, replicas: job.replicas, tasks: originals });
    }
  }
  // The workers could not reach a market that was down: their leases get the same fresh timeout
  // as their machines, so work that finished meanwhile can still be reported.
  forgiveSilence(market);
  market.log(`restored ${machines.length} machines, ${jobs.length} open jobs, ${state.leases.size} active leases`);
}
