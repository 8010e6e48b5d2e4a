// The live market's transitions: after each commit, the one place its memory (LiveState) and the
// engine's MarketState change together, so the two models cannot drift apart. Service modules
// decide nothing here and change memory and the engine only through these, after their
// transaction committed (or, where the engine must see a change before it is asked where tasks
// go, tell it first and undo it when the transaction fails: machineLeaving / machineStayed).
// The engine's re-placement (`Engine.place`) commits its own side as it answers; tasksPlaced
// applies the answer to memory. A cancellation is the one change made to memory before its
// transaction (jobEnded, then the write outside the market's lock, tasks/cancel.ts): once the job
// has left memory nothing else writes for it, so its transaction needs no lock.
import type { Market } from "./market.ts";
import type { LeaseTerms } from "../resources/lease-terms.ts";
import { demandOf, type Decision, type JobSpec } from "./engine.ts";
import type { LiveJob, LiveLease, LiveMachine, LiveTask } from "./live.ts";
import { proved } from "../resources/presence.ts";

/** A machine joined the market (registered, or restored at start). */
export function machineJoined(market: Market, machine: LiveMachine): void {
  market.state.machines.set(machine.id, machine);
  market.engine.addMachine(machine, market.clock.now());
}

/** A machine's profile changed in memory (controls, reputation): the engine plans on the new one. */
export function machineChanged(market: Market, machine: LiveMachine, now = market.clock.now()): void {
  market.engine.addMachine(machine, now);
}

/** A machine is leaving: the engine forgets it first, so that it places the machine's tasks elsewhere. */
export function machineLeaving(market: Market, machineId: string): void {
  market.engine.removeMachine(machineId);
}

/** The departure could not be recorded: the engine holds the machine and its tasks again, as memory does. */
export function machineStayed(market: Market, machine: LiveMachine, tasks: LiveTask[], now: number): void {
  market.engine.addMachine(machine, now);
  market.engine.assume(
    tasks.flatMap((t) => {
      const job = market.state.jobs.get(t.jobId);
      return job ? [demandOf(t, job)] : [];
    }),
    machine.id,
  );
}

/** The departure committed: the machine, its leases and its hold on its tasks leave memory (the engine forgot it in machineLeaving). */
export function machineLeft(market: Market, machine: LiveMachine, released: LiveTask[]): void {
  market.state.machines.delete(machine.id);
  if (machine.probe) market.state.probes.delete(machine.probe.id);
  for (const t of released) t.machineId = null;
  for (const leaseId of machine.leases) market.state.leases.delete(leaseId);
}

/**
 * A submitted job the engine admitted or delayed, once its decision is written: it and every copy
 * of its tasks join the market, placed or pending. (The engine was told of the decision when it
 * made it, so the decisions made while it was written counted its load: jobs.ts admit.)
 */
export function jobDecided(market: Market, job: LiveJob, copies: { id: string; index: number; replica: number; bytes: number }[], placed: Map<string, string>): void {
  market.state.jobs.set(job.id, job);
  addTasks(market, job.id, copies, placed);
}

/** A decision the engine was told of whose statement failed: the engine forgets the job, its placed tasks and its delay. */
export function decisionUndone(market: Market, jobId: string, decision: Decision): void {
  if (decision.outcome === "admitted") for (const p of decision.placements) market.engine.taskDropped(p.taskId);
  market.engine.jobEnded(jobId);
}

/** New task copies of a job join memory: placed on their machines' queues, or pending. */
function addTasks(market: Market, jobId: string, copies: { id: string; index: number; replica: number; bytes: number }[], placed: Map<string, string>): void {
  for (const { id, index, replica, bytes } of copies) {
    const task: LiveTask = { id, jobId, index, replica, bytes, machineId: null, state: "pending", attempts: 0 };
    market.state.tasks.set(id, task);
    market.state.enqueue(task, placed.get(id) ?? null);
  }
}

/** The rest of a pilot job admitted once its pilots ran (remainder.ts): those tasks join the market, placed. */
export function remainderAdmitted(market: Market, job: LiveJob, rows: { id: string; index: number; replica: number; bytes: number }[], placed: Map<string, string>, spec: JobSpec, decision: Decision): void {
  addTasks(market, job.id, rows, placed);
  market.engine.commit(spec, decision);
}

/** A delayed job the engine asked again and delayed again: only the engine's record of it changes. */
export function jobStillDelayed(market: Market, spec: JobSpec, decision: Decision): void {
  market.engine.commit(spec, decision);
}

/** A delayed job admitted at a re-evaluation, with its money terms: its tasks join their machines' queues. */
export function delayedJobAdmitted(
  market: Market,
  job: LiveJob,
  terms: Pick<LiveJob, "escrowMicro" | "priceMicro" | "pricing" | "priceAtWork" | "plannedAt">,
  tasks: LiveTask[],
  spec: JobSpec,
  decision: Decision & { outcome: "admitted" },
): void {
  const placed = new Map(decision.placements.map((p) => [p.taskId, p.machineId]));
  Object.assign(job, terms, { status: "admitted" });
  // Pilots admitted late: their price is the pilots' price the rest is planned against.
  if (job.pilots?.phase === "provisional") job.pilots.priceMicro = terms.priceMicro;
  for (const t of tasks) market.state.enqueue(t, placed.get(t.id) ?? null);
  market.engine.commit(spec, decision);
}

/** A delayed job given up on (the engine's max wait, or the consumer's balance): it leaves the market. */
export function delayedJobRejected(market: Market, jobId: string): void {
  market.state.dropJob(jobId);
  market.engine.jobEnded(jobId);
}

/** A delayed job restored at start: the engine counts its wait from its arrival. */
export function delayedJobRestored(market: Market, spec: JobSpec): void {
  market.engine.assumeDelayed(spec, market.clock.now());
}

/** A job that ended (finished, failed, cancelled): its leases, queued tasks and engine load go. */
export function jobEnded(market: Market, jobId: string): void {
  const tasks = market.state.tasks.ofJob(jobId);
  for (const t of tasks) {
    for (const l of market.state.leases.ofTask(t.id)) {
      market.state.leases.delete(l.id);
      market.state.machines.get(l.machineId)?.leases.delete(l.id);
    }
  }
  for (const t of tasks) {
    if (t.state === "done") continue;
    market.state.unqueue(t);
    market.engine.taskDropped(t.id);
  }
  market.state.dropJob(jobId);
  market.engine.jobEnded(jobId);
}

/** Tasks handed to a machine under these leases: out of their queues (another machine's, when taken), running there. */
export function tasksLeased(market: Market, machine: LiveMachine, tasks: LiveTask[], leases: ({ id: string; taskId: string } & LeaseTerms)[], now: number): void {
  for (const task of tasks) {
    // Out of its queue at a constant cost, wherever it was in it (market/task-queue.ts).
    market.state.unqueue(task);
    const from = task.machineId;
    if (from && from !== machine.id) market.engine.taskMoved(task.id, from, machine.id);
    task.machineId = machine.id;
    task.state = "leased";
    task.attempts += 1;
    market.engine.taskStarted(task.id, machine.id, now);
  }
  // Leasing what was queued for it is a proof that the machine is there (resources/presence.ts).
  if (tasks.length) proved(machine, now);
  for (const row of leases) {
    const { id, taskId, issuedAt, expiresAt, pieceRateMicro, pilot, ahead } = row;
    market.state.leases.set(id, { id, taskId, jobId: market.state.tasks.get(taskId)!.jobId, machineId: machine.id, issuedAt, expiresAt, pieceRateMicro, pilot, ahead });
    machine.leases.add(id);
  }
}

/** A copy that ran to a result on this machine: done in memory, its load gone from the engine. */
export function taskDone(market: Market, task: LiveTask, machine: LiveMachine, result: { resultId: string; outputHash: string; seconds: number }, now: number): void {
  Object.assign(task, { state: "done", resultId: result.resultId, outputHash: result.outputHash, producerId: machine.ownerId, producerNetwork: machine.network });
  machine.unprovenExpiries = 0;
  market.engine.taskFinished(task.id, machine.id, result.seconds, now);
}

/** A queued task moved to another machine's queue (rebalancing). */
export function taskMoved(market: Market, task: LiveTask, toMachineId: string): void {
  const from = task.machineId;
  market.state.unqueue(task);
  market.state.enqueue(task, toMachineId);
  if (from) market.engine.taskMoved(task.id, from, toMachineId);
}

/** Tasks the engine placed again (Engine.place, which committed its side): they join their machines' queues, or wait pending. */
export function tasksPlaced(market: Market, tasks: LiveTask[], placement: Map<string, string | null>): void {
  for (const t of tasks) market.state.enqueue(t, placement.get(t.id) ?? null);
}

/** A task restored at start on its machine: running under its active lease, or queued. */
export function taskRestored(market: Market, task: LiveTask, job: Pick<LiveJob, "workPerTask" | "memoryMbPerTask">, on: { machineId: string; lease?: LiveLease }): void {
  if (on.lease) {
    Object.assign(task, { state: "leased", machineId: on.machineId });
    market.state.leases.set(on.lease.id, on.lease);
    market.state.machines.get(on.machineId)!.leases.add(on.lease.id);
  } else {
    market.state.enqueue(task, on.machineId);
  }
  market.engine.assume([demandOf(task, job)], on.machineId);
}
