import { createHash } from "node:crypto";
import type { Caller } from "../api/trpc.ts";
import { refuse } from "../api/errors.ts";
import type { Market } from "../market/market.ts";
import { baseTaskId, offeredSlots, type LiveMachine, type LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import { siblingOn } from "../market/replicas.ts";
import { ownMachine } from "./machines.ts";
import { completeTask } from "../tasks/results.ts";

export const TASK_LIMITS = { wallMs: 120_000, memoryPages: 1024, outputBytes: 1 << 20 };

/** The job file's per-task limits where it set them (tasks/job-request.ts), the market's otherwise. */
/** A task's limits: the job file's own wall time and memory where it gave them, else the market's defaults. */
export function leaseLimits(stored: unknown) {
  const own = (stored ?? {}) as Partial<typeof TASK_LIMITS>;
  return { ...TASK_LIMITS, ...(own.wallMs ? { wallMs: own.wallMs } : {}), ...(own.memoryPages ? { memoryPages: own.memoryPages } : {}) };
}

/**
 * Hands up to `max` tasks to a machine: first from its own queue, then, when that is empty while
 * other machines hold queued tasks nobody has started, from the longest of those queues
 * (rebalancing: an idle slot takes queued work, DESIGN.md "Rebalancing").
 */
export async function leaseTasks(market: Market, caller: Caller, machineId: string, max: number) {
  return market.serial(async () => {
    const machine = ownMachine(market, caller, machineId);
    const now = market.clock.now();
    machine.lastHeartbeatAt = now;
    const room = Math.max(0, Math.min(max, offeredSlots(machine) * 2 - machine.leases.size));
    const picked = pickTasks(market, machine, room);
    if (!picked.length) {
      await market.db.machine.update({ where: { id: machineId }, data: { lastHeartbeatAt: new Date(now) } });
      return { leases: [] };
    }
    const expiresAt = now + market.settings.leaseTimeoutMs;
    const rows = await market.db.$transaction(async (tx) => {
      await tx.machine.update({ where: { id: machineId }, data: { lastHeartbeatAt: new Date(now) } });
      const out = [];
      for (const task of picked) {
        const moved = await tx.task.updateMany({
          where: { id: task.id, status: "queued" },
          data: { status: "leased", machineId, attempts: { increment: 1 } },
        });
        if (moved.count !== 1) throw new Error(`task ${task.id} was not queued in the database`);
        const lease = await tx.lease.create({
          data: { taskId: task.id, machineId, issuedAt: new Date(now), expiresAt: new Date(expiresAt) },
          include: { task: { include: { job: { select: { moduleHash: true, taskLimits: true } } } } },
        });
        out.push(lease);
      }
      const jobIds = [...new Set(picked.map((t) => t.jobId))];
      await tx.job.updateMany({ where: { id: { in: jobIds }, status: "admitted" }, data: { status: "running" } });
      return out;
    });
    for (const task of picked) {
      const from = task.machineId;
      market.state.unqueue(task);
      if (from && from !== machineId) market.engine.taskMoved(task.id, from, machineId);
      task.machineId = machineId;
      task.state = "leased";
      task.attempts += 1;
      market.engine.taskStarted(task.id, machineId, now);
    }
    for (const row of rows) {
      market.state.leases.set(row.id, { id: row.id, taskId: row.taskId, machineId, expiresAt });
      machine.leases.add(row.id);
    }
    for (const jobId of new Set(picked.map((t) => t.jobId))) {
      const job = market.state.jobs.get(jobId);
      if (job) {
        if (job.status === "admitted") job.status = "running";
        market.emit({ kind: "job", jobId, ownerId: job.ownerId });
      }
    }
    return {
      leases: rows.map((row) => ({
        leaseId: row.id,
        taskId: row.taskId,
        seed: baseTaskId(row.taskId),
        jobId: row.task.jobId,
        moduleHash: row.task.job.moduleHash,
        args: row.task.args,
        stdin: Buffer.from(row.task.stdin).toString("base64"),
        ...(row.task.env ? { env: row.task.env as Record<string, string> } : {}),
        ...(row.task.files ? { files: row.task.files as Record<string, string> } : {}),
        limits: leaseLimits(row.task.job.taskLimits),
        expiresAt,
      })),
    };
  });
}

/** Copies of one task must run on different machines, or their agreement would prove nothing. */
function ranHere(market: Market, task: LiveTask, machineId: string, picked: LiveTask[]): boolean {
  if (siblingOn(market.state, task, machineId)) return true;
  return market.state.copies(task).some((copy) => copy !== task && picked.includes(copy));
}

function pickTasks(market: Market, machine: LiveMachine, room: number): LiveTask[] {
  const picked: LiveTask[] = [];
  const takeFrom = (ids: string[]) => {
    for (const id of ids) {
      if (picked.length >= room) return;
      const task = market.state.tasks.get(id);
      if (task?.state === "queued" && !picked.includes(task) && !ranHere(market, task, machine.id, picked)) picked.push(task);
    }
  };
  takeFrom(machine.queue);
  if (picked.length < room) {
    const others = [...market.state.machines.values()]
      .filter((m) => m.id !== machine.id && m.queue.length > 0)
      .sort((a, b) => b.queue.length / b.slots - a.queue.length / a.slots);
    for (const other of others) {
      // A copy its own machine may never run (its owner ran a sibling) is anyone else's to take;
      // otherwise a copy sent back to the one machine left would wait there after others connect.
      takeFrom(other.queue.filter((id) => stuckOn(market, id, other.id)));
      // The rest only if this machine asks no more per second than the one the engine chose:
      // otherwise an expensive machine could take every task placed on a cheap one and be paid its
      // own price for it. (Per second, not per unit of work: benchmarks of equal machines differ a
      // little, and equal asking prices should share work.) Leave the other machine what it can
      // start itself right now; take from the back.
      if (machine.pricePerSecondMicro > other.pricePerSecondMicro) continue;
      takeFrom(other.queue.slice(Math.max(0, offeredSlots(other) - other.leases.size)).reverse());
      if (picked.length >= room) break;
    }
  }
  return picked;
}

function stuckOn(market: Market, taskId: string, machineId: string): boolean {
  const task = market.state.tasks.get(taskId);
  return task !== undefined && siblingOn(market.state, task, machineId) !== undefined;
}

export async function heartbeat(market: Market, caller: Caller, machineId: string, leaseIds: string[]) {
  return market.serial(async () => {
    const machine = ownMachine(market, caller, machineId);
    const now = market.clock.now();
    machine.lastHeartbeatAt = now;
    const current = leaseIds.filter((id) => machine.leases.has(id));
    const expiresAt = now + market.settings.leaseTimeoutMs;
    await market.db.$transaction([
      market.db.machine.update({ where: { id: machineId }, data: { lastHeartbeatAt: new Date(now) } }),
      market.db.lease.updateMany({ where: { id: { in: current }, status: "active" }, data: { expiresAt: new Date(expiresAt) } }),
    ]);
    for (const id of current) {
      const lease = market.state.leases.get(id);
      if (lease) lease.expiresAt = expiresAt;
    }
    return { expiredLeaseIds: leaseIds.filter((id) => !machine.leases.has(id)), controls: machine.controls };
  });
}

export interface TaskReport {
  machineId: string;
  leaseId: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  outputHash: string;
  elapsedMs: number;
  error?: { code: string; message?: string } | undefined;
}

/** A worker's result for the lease it names; anything but the current lease is refused. */
export async function reportResult(market: Market, caller: Caller, report: TaskReport) {
  return market.serial(async () => {
    const machine = ownMachine(market, caller, report.machineId);
    const lease = market.state.leases.get(report.leaseId);
    if (!lease || lease.machineId !== machine.id) {
      throw refuse.conflict(
        { code: "stale-lease", leaseId: report.leaseId },
        "This lease is not current (it expired, was abandoned, or belongs to another machine); the result was not accepted.",
      );
    }
    const stdout = Buffer.from(report.stdout, "base64");
    const stderr = Buffer.from(report.stderr, "base64");
    if (stdout.length > TASK_LIMITS.outputBytes || stderr.length > TASK_LIMITS.outputBytes) {
      throw refuse.tooLarge({ code: "output-too-large", bytes: stdout.length, max: TASK_LIMITS.outputBytes }, "The task's output is over the limit.");
    }
    const hash = createHash("sha256").update(stdout).digest("hex");
    if (hash !== report.outputHash) {
      throw refuse.badRequest({ code: "hash-mismatch", claimed: report.outputHash, actual: hash }, "The output hash does not match the output.");
    }
    const task = market.state.tasks.get(lease.taskId);
    if (!task) throw refuse.conflict({ code: "stale-lease", leaseId: report.leaseId }, "This task is no longer live.");
    const ok = report.exitCode === 0 && !report.error;
    await completeTask(market, { machine, lease, task, ok, stdout, stderr, hash, report });
    return { accepted: ok, reason: ok ? undefined : { code: report.error?.code ?? "nonzero-exit", exitCode: report.exitCode } };
  });
}

/** Leases whose time ran out: the task goes back to the engine, the machine keeps its place. */
export async function expireLeases(market: Market) {
  return market.serial(async () => {
    const now = market.clock.now();
    const expired = [...market.state.leases.values()].filter((l) => l.expiresAt <= now);
    if (!expired.length) return 0;
    const tasks = expired.map((l) => market.state.tasks.get(l.taskId)).filter((t): t is LiveTask => !!t);
    const requeue = await market.db.$transaction(async (tx) => {
      await tx.lease.updateMany({
        where: { id: { in: expired.map((l) => l.id) }, status: "active" },
        data: { status: "expired", endedAt: new Date(now) },
      });
      return planRequeue(market, tx, tasks);
    });
    for (const lease of expired) {
      market.state.leases.delete(lease.id);
      market.state.machines.get(lease.machineId)?.leases.delete(lease.id);
    }
    for (const t of tasks) t.machineId = null;
    requeue.apply();
    market.log(`${expired.length} leases expired; their tasks were placed again`);
    return expired.length;
  });
}
