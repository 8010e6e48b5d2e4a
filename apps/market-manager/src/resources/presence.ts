import { contractMissed, contractProved, freshProof } from "@cyclemarket/costbenefit";
import { shortId } from "@cyclemarket/client/job-file";
import type { Market } from "../market/market.ts";
import { offering, type LiveMachine, type LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import { machineChanged } from "../market/transitions.ts";
import { accrueContract } from "./contracts.ts";
import { placePendingTasks } from "./machines.ts";
import { probeDone, scheduleProbe, sendProbe } from "./probes.ts";
import { leasableQueued } from "./leases.ts";

// Whether a machine is really there (docs/DESIGN.md "Dedicated pay for proven capacity"). A
// heartbeat costs nothing and proves nothing. A machine proves it is there by leasing the work
// queued for it, reporting what it leased and (dedicated machines, while idle) answering probes.
// It misses when work queued for it waits unleased past the lease timeout, when a probe goes
// unanswered past it, or when a lease it took runs out. A miss sends its queued work elsewhere at
// once and keeps new work from it until it proves itself again; for a dedicated machine, the time
// from the miss to that proof is not paid (costbenefit contractMissed).

/** Why a machine missed, for the market's log. */
export type Miss = "unleased-work" | "unanswered-probe" | "wrong-probe" | "expired-lease";

/** A dedicated machine's proof as its contract starts. */
export function startProof(m: LiveMachine, at: number) {
  if (m.kind === "dedicated") m.proof = freshProof(at);
}

/** The machine proved at `at` that it is there (it leased, reported, or answered a probe): memory only. */
export function proved(m: LiveMachine, at: number) {
  if (m.kind !== "dedicated" || !m.proof) return;
  const r = contractProved(m.proof, m.contractPaidUntil ?? at, at);
  m.proof = r.proof;
  m.contractPaidUntil = r.paidUntil;
}

/**
 * The machine missed what fell due at `at`: a dedicated machine is paid what it still proved and
 * no more until its next proof; its queued work goes elsewhere and it is offered none until it
 * proves itself again. Call inside `market.serial`.
 */
export async function missed(market: Market, m: LiveMachine, at: number, why: Miss) {
  if (market.state.machines.get(m.id) !== m) return;
  if (m.kind === "dedicated" && m.proof) {
    m.proof = contractMissed(m.proof, m.contractPaidUntil ?? at, at);
    const proof = m.proof;
    // What is still proven is paid now: the next proof forfeits everything unpaid before it.
    (await market.db.$transaction((tx) => accrueContract(tx, m, proof.provenUntil)))();
  }
  market.log(`machine ${m.name} (${shortId(m.id)}) missed (${why}); it gets no work until it proves it is there`);
  if (m.strayedSince === undefined) await setStrayed(market, m, at);
}

/** Takes the machine's capacity off the market (offering: false) and places its queued work elsewhere. */
async function setStrayed(market: Market, m: LiveMachine, at: number) {
  const now = market.clock.now();
  const queued: LiveTask[] = [];
  for (const id of m.queue) {
    const task = market.state.tasks.get(id);
    if (task && !task.leasing) queued.push(task);
  }
  m.strayedSince = at;
  m.owedSince = undefined;
  // The engine must see it gone before it is asked where its tasks go.
  machineChanged(market, m, now);
  let requeue: Awaited<ReturnType<typeof planRequeue>>;
  try {
    requeue = await market.db.$transaction((tx) => planRequeue(market, tx, queued));
  } catch (e) {
    m.strayedSince = undefined;
    machineChanged(market, m, now);
    throw e;
  }
  for (const task of queued) market.state.unqueue(task);
  requeue.apply();
  if (queued.length) market.log(`${queued.length} tasks queued on ${m.name} (${shortId(m.id)}) placed elsewhere`);
  market.emit({ kind: "machine", machineId: m.id });
  for (const jobId of new Set(queued.map((t) => t.jobId))) {
    const job = market.state.jobs.get(jobId);
    if (job) market.emit({ kind: "job", jobId, ownerId: job.ownerId });
  }
}

/** A machine that missed proved itself again: its capacity is offered again. Call inside `market.serial`. */
export async function rejoined(market: Market, m: LiveMachine) {
  if (market.state.machines.get(m.id) !== m || m.strayedSince === undefined) return;
  m.strayedSince = undefined;
  machineChanged(market, m, market.clock.now());
  market.log(`machine ${m.name} (${shortId(m.id)}) proved it is there again`);
  market.emit({ kind: "machine", machineId: m.id });
  // Tasks waiting for any machine may go there now.
  await placePendingTasks(market);
}

/**
 * The sweeper's look at every machine (sweeper.ts): work queued on a machine holding no lease
 * must be leased within the lease timeout; an idle dedicated machine is sent a probe at its random
 * moment, which must be answered within the lease timeout.
 */
export async function checkPresence(market: Market) {
  const timeout = market.settings.leaseTimeoutMs;
  for (const m of [...market.state.machines.values()]) {
    const now = market.clock.now();
    // Work its job cannot pay this machine for is not owed (leases.ts passes over it).
    if (offering(m) && m.leases.size === 0 && leasableQueued(market, m, now)) m.owedSince ??= now;
    else m.owedSince = undefined;
    const owedSince = m.owedSince;
    if (owedSince !== undefined && now - owedSince > timeout) {
      await market.serial(async () => {
        if (m.owedSince === owedSince && m.leases.size === 0) await missed(market, m, owedSince, "unleased-work");
      });
    }
    if (m.kind !== "dedicated") continue;
    const probe = m.probe;
    const idle = m.leases.size === 0 && m.queue.length === 0;
    if (probe && now > probe.dueAt) {
      await market.serial(async () => {
        if (m.probe !== probe) return;
        probeDone(market, m, probe, now);
        await missed(market, m, probe.issuedAt, "unanswered-probe");
      });
    } else if (!probe && (m.departsAt === null || now < m.departsAt)) {
      // Drawn afresh while it is busy, so a machine cannot tell a probe is due the moment it falls idle.
      if (m.nextProbeAt === undefined || (!idle && m.nextProbeAt <= now)) scheduleProbe(market, m, now);
      else if (idle && m.nextProbeAt <= now) sendProbe(market, m, now);
    }
  }
}
