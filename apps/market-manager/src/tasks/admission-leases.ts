import type { Market } from "../market/market.ts";
import { leaseRoomOf } from "../market/live.ts";
import { tasksLeased } from "../market/transitions.ts";
import { leaseLimits, wireLease } from "../resources/leases.ts";
import { opsOf } from "../ops/ops.ts";
import type { Admission, InlineIntake } from "./admission.ts";
import { rowId } from "../db/row-id.ts";
import { leaseTermsOf, type LeasedJob } from "../resources/lease-terms.ts";

// A new job's tasks placed on a machine that holds nothing and waits on its work stream (one
// opened with `lease`) are leased by the admission's own statement: the lease is durable with the
// decision, and the stream sends it at once, without a lease statement or a call of the worker's
// after it. Only a small job stored with its admission (admission.ts InlineIntake) is leased so;
// any other task is queued, and its machine leases it as before.

export type AdmissionLeases = NonNullable<Admission["leases"]>;

/**
 * Machines an admission still being written leases to (planned, not yet applied): memory does not
 * show those leases yet, so another admission decided meanwhile must not count the machine idle.
 */
const plannedOn = (market: Market) => market.resources.admissionLeases;

/**
 * Which of the placed tasks (of `live`, the copies that may run now) are leased at admission, to
 * which idle machine, and on what terms (`job`'s work and limits; `pilot` says which are pilots).
 */
export function planAdmissionLeases(market: Market, placed: Map<string, string>, live: Set<string>, job: LeasedJob, pilot: (taskId: string) => boolean, now: number): AdmissionLeases | undefined {
  const room = new Map<string, number>();
  const rows: AdmissionLeases["rows"] = [];
  const busy = plannedOn(market);
  for (const [taskId, machineId] of placed) {
    if (!live.has(taskId)) continue;
    let left = room.get(machineId);
    if (left === undefined) {
      const m = market.state.machines.get(machineId);
      const max = market.workRoutes.streamLeaseMax(machineId);
      // Idle and waiting: nothing leased or queued, and a stream that takes leases open; its room is then whole.
      left = m && max > 0 && m.leases.size === 0 && m.queue.length === 0 && !busy.has(machineId) ? Math.min(max, leaseRoomOf(m)) : 0;
    }
    if (left > 0) {
      const m = market.state.machines.get(machineId)!;
      const ahead = rows.filter((r) => r.machineId === machineId).length;
      rows.push({ leaseId: rowId(), taskId, machineId, terms: leaseTermsOf(market, m, job, pilot(taskId), ahead, now) });
    }
    room.set(machineId, left - 1);
  }
  if (!rows.length) return undefined;
  for (const { machineId } of rows) busy.set(machineId, (busy.get(machineId) ?? 0) + 1);
  return { rows };
}

/** The planned leases are in memory now, or will never be (their admission failed). */
export function dropAdmissionLeases(market: Market, leases: AdmissionLeases) {
  const busy = plannedOn(market);
  for (const { machineId } of leases.rows) {
    const n = (busy.get(machineId) ?? 0) - 1;
    if (n > 0) busy.set(machineId, n);
    else busy.delete(machineId);
  }
}

/** Once the admission committed and its tasks are live: the leases in memory, and on their machines' streams. */
export function applyAdmissionLeases(market: Market, jobId: string, intake: InlineIntake, taskLimits: unknown, leases: AdmissionLeases, now: number) {
  dropAdmissionLeases(market, leases);
  const byMachine = new Map<string, AdmissionLeases["rows"]>();
  for (const row of leases.rows) byMachine.set(row.machineId, [...(byMachine.get(row.machineId) ?? []), row]);
  const inputs = new Map(intake.tasks.map((t) => [t.id, t]));
  const limits = leaseLimits(taskLimits);
  for (const [machineId, rows] of byMachine) {
    const machine = market.state.machines.get(machineId)!;
    const tasks = rows.map((r) => market.state.tasks.get(r.taskId)!);
    tasksLeased(market, machine, tasks, rows.map((r) => ({ id: r.leaseId, taskId: r.taskId, ...r.terms })), now);
    market.workRoutes.push(
      machineId,
      rows.map((r) => wireLease({ leaseId: r.leaseId, taskId: r.taskId, jobId, moduleHash: intake.moduleHash }, inputs.get(r.taskId)!, limits, r.terms)),
    );
  }
  const job = market.state.jobs.get(jobId);
  if (job?.status === "admitted") job.status = "running";
  opsOf(market).metrics.leases.inc(leases.rows.length);
}
