// The producer's controls over a machine (pause, CPU limit, only while idle, weekly schedule,
// memory cap per task), as the Resource Manager applies them. The engine is told the capacity the
// machine now offers (an update of its profile: available or not, speed under the CPU limit,
// memory per slot under the cap), so it stops planning on capacity that is switched off; the
// tasks queued there are placed again, and its leased tasks either finish or go back at once, as
// the producer chose.
import { MachineControls, type MachineControlsPatch } from "@cyclemarket/worker-runtime";
import type { Caller } from "../api/trpc.ts";
import type { Market } from "../market/market.ts";
import { offeredCapacity, offering, type LiveMachine, type LiveTask } from "../market/live.ts";
import { planRequeue } from "../market/requeue.ts";
import { machineChanged } from "../market/transitions.ts";
import { ownMachine, placePendingTasks } from "./machines.ts";
import { shortId } from "@cyclemarket/client/job-file";

export interface ControlsChange {
  controls?: MachineControlsPatch | undefined;
  /** The worker's word on its own conditions (schedule, owner's use); unchanged when absent. */
  available?: boolean | undefined;
}

/** Applies a change to a machine's controls; call inside `market.serial`. */
export async function changeControls(market: Market, machine: LiveMachine, change: ControlsChange) {
  const before = { controls: machine.controls, localAvailable: machine.localAvailable };
  const controls = MachineControls.parse({ ...machine.controls, ...change.controls });
  const localAvailable = change.available ?? machine.localAvailable;
  const wasOffering = offering(machine);
  const now = market.clock.now();
  machine.controls = controls;
  machine.localAvailable = localAvailable;
  const isOffering = offering(machine);

  // Switched off: nothing waits in its queue, and its leases go back too when the producer said "now".
  const queued: LiveTask[] = [];
  const handedBack: { leaseId: string; task: LiveTask }[] = [];
  if (!isOffering) {
    for (const id of machine.queue) {
      const task = market.state.tasks.get(id);
      if (task) queued.push(task);
    }
    if (controls.handBack === "now") {
      for (const leaseId of machine.leases) {
        const task = market.state.tasks.get(market.state.leases.get(leaseId)?.taskId ?? "");
        if (task) handedBack.push({ leaseId, task });
      }
    }
  } else {
    // Still offering, perhaps with a lower cap on memory per task: queued tasks that no longer fit go elsewhere.
    const memoryPerSlotMb = offeredCapacity(machine).memoryPerSlotMb;
    for (const id of machine.queue) {
      const task = market.state.tasks.get(id);
      const job = task && market.state.jobs.get(task.jobId);
      if (task && job && job.memoryMbPerTask > memoryPerSlotMb) queued.push(task);
    }
  }
  // The engine must see the new profile before it is asked where the released tasks go.
  machineChanged(market, machine, now);
  let requeue: Awaited<ReturnType<typeof planRequeue>>;
  try {
    requeue = await market.db.$transaction(async (tx) => {
      await tx.machine.update({ where: { id: machine.id }, data: { controls, localAvailable } });
      if (handedBack.length) {
        await tx.lease.updateMany({
          where: { id: { in: handedBack.map((h) => h.leaseId) }, status: "active" },
          data: { status: "abandoned", endedAt: new Date(now) },
        });
        // A run the producer gave back is not a failed try of the task: it does not count toward the job's limit.
        await tx.task.updateMany({ where: { id: { in: handedBack.map((h) => h.task.id) }, attempts: { gt: 0 } }, data: { attempts: { decrement: 1 } } });
      }
      return planRequeue(market, tx, [...queued, ...handedBack.map((h) => h.task)]);
    });
  } catch (e) {
    // Nothing was recorded: memory and the engine keep the machine as it was.
    Object.assign(machine, before);
    machineChanged(market, machine, now);
    throw e;
  }
  for (const task of queued) market.state.unqueue(task);
  for (const { leaseId, task } of handedBack) {
    market.state.leases.delete(leaseId);
    machine.leases.delete(leaseId);
    task.machineId = null;
    task.attempts = Math.max(0, task.attempts - 1);
  }
  requeue.apply();
  if (wasOffering !== isOffering || queued.length || handedBack.length) {
    const what = wasOffering === isOffering ? "changed its controls" : isOffering ? "offers its capacity again" : "switched its capacity off";
    market.log(
      `machine ${machine.name} (${shortId(machine.id)}) ${what}` +
        (queued.length + handedBack.length ? `; ${queued.length + handedBack.length} tasks placed again (${handedBack.length} handed back while leased)` : ""),
    );
  }
  // Capacity came back: tasks waiting for any machine may go there now.
  if (isOffering && !wasOffering) await placePendingTasks(market);
  market.emit({ kind: "machine", machineId: machine.id });
  for (const jobId of new Set([...queued, ...handedBack.map((h) => h.task)].map((t) => t.jobId))) {
    const job = market.state.jobs.get(jobId);
    if (job) market.emit({ kind: "job", jobId, ownerId: job.ownerId });
  }
  return { controls, available: localAvailable, offering: isOffering };
}

/** A producer (the page, the CLI, an API call) changes the controls of one of their machines. */
export function setMachineControls(market: Market, caller: Caller, machineId: string, change: ControlsChange) {
  return market.serial(async () => changeControls(market, ownMachine(market, caller, machineId), change));
}

/** The caller's machines in the market now, with their controls and what they offer. */
export function listOwnMachines(market: Market, caller: Caller) {
  return [...market.state.machines.values()]
    .filter((m) => m.ownerId === caller.id)
    .map((m) => ({
      id: m.id,
      name: m.name,
      kind: m.kind,
      slots: m.slots,
      speed: m.speed,
      memoryPerSlotMb: m.memoryPerSlotMb,
      controls: m.controls,
      /** The machine's own conditions (schedule, owner's use) allow it to work now. */
      localAvailable: m.localAvailable,
      offering: offering(m),
      running: m.leases.size,
      queued: m.queue.length,
      lastHeartbeatAt: m.lastHeartbeatAt,
    }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}
