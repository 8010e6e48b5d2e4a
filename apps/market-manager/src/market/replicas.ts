// Copies of one task run on different machines, or their agreement would prove nothing (DESIGN.md
// "Verification"). This file holds that rule as the live market applies it, and the reasons a
// consumer is given when it is what keeps their job waiting.
import type { Reason } from "./engine.ts";
import type { LiveState, LiveTask } from "./live.ts";

/** The other copies of `task` that ran, or are running, somewhere: their machines may not run `task`. */
function siblingsThatRan(state: LiveState, task: LiveTask): LiveTask[] {
  return state.copies(task).filter((c) => c !== task && (c.state === "leased" || c.state === "done") && c.machineId !== null);
}

/** Another copy of `task` that ran, or is running, on this machine: the machine may not run `task`. */
export function siblingOn(state: LiveState, task: LiveTask, machineId: string): LiveTask | undefined {
  return siblingsThatRan(state, task).find((c) => c.machineId === machineId);
}

/** A job asking for more copies of each task than there are machines cannot be placed yet. */
export function replicaShortfall(state: LiveState, replicas: number): Reason | null {
  const machinesConnected = state.machines.size;
  return replicas > machinesConnected && machinesConnected > 0 ? { code: "needs-more-machines", replicas, machinesConnected } : null;
}

/**
 * A copy waiting while every connected machine ran or runs another copy of its task: it starts
 * when another machine connects. Null when some connected machine may take it.
 */
export function copyNeedsAnotherMachine(state: LiveState, task: LiveTask): Reason | null {
  // A copy of a task whose quorum is reached holds nothing back.
  if ((task.state !== "queued" && task.state !== "pending") || task.agreedHash) return null;
  if (state.machines.size === 0) return null;
  // At most k - 1 siblings: the check costs nothing next to the machines' count.
  const holders = siblingsThatRan(state, task).filter((c) => state.machines.has(c.machineId!));
  if (new Set(holders.map((h) => h.machineId)).size < state.machines.size) return null;
  return {
    code: "needs-another-machine",
    taskIndex: task.index,
    copy: task.replica + 1,
    copiesOnMachines: holders.map((h) => ({ copy: h.replica + 1, state: h.state })).sort((x, y) => x.copy - y.copy),
    machinesConnected: state.machines.size,
  };
}
