import { BenefitCurve, type WorkSample } from "@cyclemarket/costbenefit";
import { priceAtWorkOf } from "../ledger/price-at-work.ts";
import type { Market } from "./market.ts";
import type { LiveTask } from "./live.ts";
import { demandOf } from "./engine.ts";
import { delayedJobRestored, machineJoined, taskRestored } from "./transitions.ts";
import { liveMachineFromRow } from "../resources/machines.ts";
import { loadOwners } from "./standing.ts";
import { forgiveSilence } from "./sweeper.ts";
import { resumeContract } from "../resources/contracts.ts";
import { leaseLimits } from "../resources/leases.ts";
import { latestReportAt } from "../resources/lease-terms.ts";
import { discardUnfinishedIntake } from "../tasks/intake.ts";
import { rowId } from "../db/row-id.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { escrowAndHeld } from "../db/sql/job-money.ts";

/** What a job's escrow paid producers so far and holds for lateness, as the ledger has it. */
async function paidAndHeld(market: Market, jobId: string, escrowMicro: bigint) {
  const [row] = await runStatement(viaPrisma(market.db), escrowAndHeld, { jobId });
  const held = BigInt(row?.held ?? 0);
  return { paidMicro: escrowMicro - BigInt(row?.inEscrow ?? 0) - held, heldMicro: held };
}

/** A job's stored work samples (Job.workSamples), as memory holds them. */
const readSamples = (stored: unknown): WorkSample[] =>
  Array.isArray(stored) ? stored.filter((x): x is WorkSample => typeof x?.owner === "string" && typeof x?.work === "number") : [];

/** How often a running market stamps that it is alive: an outage is known to within this. */
export const ALIVE_STAMP_MS = 2000;

/** The market stamps that it is alive (the sweeper, every ALIVE_STAMP_MS). */
export async function stampAlive(market: Market, now = market.clock.now()) {
  await market.db.marketAlive.upsert({ where: { id: "market" }, create: { id: "market", aliveAt: new Date(now) }, update: { aliveAt: new Date(now) } });
}

/**
 * The market was down from its last stamp to now: an outage, recorded, and every outage known
 * read into memory (ledger/settlement.ts downtimeDuring: the lateness the market pays for).
 */
async function recordOutage(market: Market): Promise<number> {
  const { db } = market;
  const now = market.clock.now();
  const alive = await db.marketAlive.findUnique({ where: { id: "market" } });
  const awayMs = alive ? Math.max(0, now - alive.aliveAt.getTime()) : 0;
  if (awayMs > ALIVE_STAMP_MS) await db.marketOutage.create({ data: { id: rowId(), startedAt: alive!.aliveAt, endedAt: new Date(now) } });
  await stampAlive(market, now);
  const outages = await db.marketOutage.findMany({ orderBy: { startedAt: "asc" } });
  market.outages = outages.map((o) => ({ startedAt: o.startedAt.getTime(), endedAt: o.endedAt.getTime() }));
  return awayMs;
}

/**
 * Rebuilds the live market from PostgreSQL after a start or a crash: machines still active,
 * jobs not finished, their open tasks and leases. Machines get a fresh timeout and leases the time
 * the Market Manager was down (forgiveSilence).
 */
export async function restoreMarket(market: Market) {
  const awayMs = await recordOutage(market);
  const interrupted = await discardUnfinishedIntake(market.db, market.managerId);
  if (interrupted) market.log(`removed ${interrupted} job(s) whose submission was interrupted before the market decided`);
  const { machines, jobs } = await loadMarket(market, { managerId: market.managerId });
  // The workers could not reach a market that was down: their machines get a fresh timeout and
  // their leases the time the market was away, so work that finished meanwhile can still be reported.
  forgiveSilence(market, awayMs);
  market.log(`restored ${machines} machines, ${jobs} open jobs, ${market.state.leases.size} active leases`);
}

/** Which rows to bring into memory: this manager's own, or those it just took over from another (adopt.ts). */
export type RowsToLoad = { managerId: string } | { machineIds: string[]; jobIds: string[] };

/**
 * Reads machines still active and jobs not finished, their open tasks and leases, into memory:
 * at a start, this manager's own; when a manager died, what this one took over from it.
 */
export async function loadMarket(market: Market, rows: RowsToLoad): Promise<{ machines: number; jobs: number }> {
  const { db, state } = market;
  const machineWhere = "managerId" in rows ? { managerId: rows.managerId } : { id: { in: rows.machineIds } };
  const jobWhere = "managerId" in rows ? { managerId: rows.managerId } : { id: { in: rows.jobIds } };
  const machines = await db.machine.findMany({ where: { status: "active", ...machineWhere }, include: { owner: { select: { emailVerified: true } } } });
  for (const row of machines) {
    const live = liveMachineFromRow(row);
    machineJoined(market, live);
    await resumeContract(market, live, market.clock.now());
  }
  const owners = new Set(machines.map((m) => m.ownerId));
  const jobs = await db.job.findMany({
    where: { status: { in: ["admitted", "running", "delayed"] }, ...jobWhere },
    include: {
      tasks: {
        where: { status: { in: ["pending", "queued", "leased", "done"] } },
        orderBy: { index: "asc" },
        include: {
          // Every lease with its run's result: a result is found by its lease (its id), and the
          // task's runs by its leases' key (Result has no key on its task).
          leases: {
            orderBy: { issuedAt: "desc" },
            include: {
              machine: { select: { ownerId: true, network: true } },
              result: { select: { id: true, createdAt: true, outputHash: true, accepted: true, failure: true, failureConfirmed: true } },
            },
          },
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
      workSamples: readSamples(job.workSamples),
      wallMs: leaseLimits(job.taskLimits).wallMs,
      memoryMbPerTask: job.memoryMbPerTask,
      escrowMicro: job.escrowMicro,
      priceMicro: job.quotedPriceMicro ?? 0n,
      maxSpendMicro: job.maxSpendMicro,
      priceAtWork: priceAtWorkOf(job.decision),
      submitNetwork: job.submitNetwork,
      ...(await paidAndHeld(market, job.id, job.escrowMicro)),
      failedTasks: await db.task.count({ where: { jobId: job.id, replica: 0, status: "failed" } }),
      pricing: job.pricing === "bid" ? "bid" : "posted",
      replicas: job.replicas,
      arrivedAt: job.submittedAt.getTime(),
      plannedAt: job.expectedCompletionAt?.getTime() ?? null,
      // Checked by the schema when the job was submitted; parsed again so memory holds the type.
      benefit: BenefitCurve.parse(job.benefit),
      ...(job.pilotCount === null
        ? {}
        : { pilots: { count: job.pilotCount, priceMicro: job.pilotPriceMicro ?? 0n, phase: job.workEstimate === "measured" ? ("measured" as const) : ("provisional" as const) } }),
    });
    // Tasks after the pilots join the market only when the engine admits them (remainder.ts).
    const held = job.pilotCount !== null && job.workEstimate === "provisional" ? job.pilotCount : Infinity;
    const agreed = new Map<string, string>();
    for (const row of job.tasks) {
      if (row.index >= held) continue;
      // The active lease, and expired ones whose late result may still be the task's first; the runs' results, newest first.
      const t = { ...row, leases: row.leases.filter((l) => l.status === "active" || l.status === "expired"), results: runsOf(row.leases) };
      const task: LiveTask = { id: t.id, jobId: job.id, index: t.index, replica: t.replica, bytes: t.stdin.length, machineId: null, state: "pending", attempts: t.attempts };
      state.tasks.set(t.id, task);
      if (t.replica >= job.replicas) state.jobs.get(job.id)!.copiesAdded = true;
      if (t.status === "done") {
        // A copy that ran: it waits for its siblings to reach a quorum, or was judged already.
        const last = t.results.find((r) => r.failure === null);
        Object.assign(task, { state: "done", machineId: t.machineId, resultId: last?.id, outputHash: last?.outputHash, producerId: last?.machine.ownerId, producerNetwork: last?.machine.network, pieceMicro: last?.lease.pieceRateMicro });
        if (last?.accepted) agreed.set(`${t.index}`, last.outputHash);
        if (last) owners.add(last.machine.ownerId);
        continue;
      }
      // Failed runs no other owner has reproduced yet: the task's next run goes elsewhere.
      const failures = t.results
        .filter((r) => r.failure !== null && !r.failureConfirmed)
        .reverse()
        .map((r) => ({ owner: r.machine.ownerId, machineId: r.machineId, network: r.machine.network, code: r.failure!, resultId: r.id, pieceMicro: r.lease.pilot ? 0n : r.lease.pieceRateMicro }));
      if (failures.length) {
        task.failures = failures;
        state.rerunsElsewhere.add(task.id);
      }
      const lease = t.leases.find((l) => l.status === "active");
      if (job.replicas === 1) {
        for (const l of t.leases) {
          if (l.status !== "expired") continue;
          const { id, machineId, pieceRateMicro, pilot, ahead } = l;
          state.lateLeases.set(id, { id, taskId: t.id, jobId: job.id, machineId, issuedAt: l.issuedAt.getTime(), expiresAt: l.expiresAt.getTime(), pieceRateMicro, pilot, ahead });
          const m = state.machines.get(machineId);
          const live = state.jobs.get(job.id);
          if (m && live) m.lateUntil = Math.max(m.lateUntil ?? 0, latestReportAt(market, m, live, { issuedAt: l.issuedAt.getTime(), ahead }));
        }
      }
      if (t.status === "leased" && lease && state.machines.has(lease.machineId)) {
        const { id, machineId, pieceRateMicro, pilot, ahead } = lease;
        const terms = { issuedAt: lease.issuedAt.getTime(), expiresAt: lease.expiresAt.getTime(), pieceRateMicro, pilot, ahead };
        taskRestored(market, task, job, { machineId, lease: { id, taskId: t.id, jobId: job.id, machineId, ...terms } });
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
  // Whose machines are here or whose copies await a verdict: verification reads their standing.
  // Owners this manager knows already keep what it holds of them (rows taken over, or handed to it).
  await loadOwners(market, [...owners].filter((id) => !state.owners.has(id)));
  return { machines: machines.length, jobs: jobs.length };
}

/** A task's results, newest first, each with the machine that ran it and the terms of the lease it ran under. */
function runsOf<R extends { createdAt: Date; outputHash: Uint8Array }, M>(leases: { machineId: string; machine: M; pieceRateMicro: bigint; pilot: boolean; result: R | null }[]) {
  return leases
    .flatMap((l) => (l.result ? [{ ...l.result, outputHash: Buffer.from(l.result.outputHash).toString("hex"), machineId: l.machineId, machine: l.machine, lease: { pieceRateMicro: l.pieceRateMicro, pilot: l.pilot } }] : []))
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}
