import type { Market } from "./market.ts";
import type { LiveMachine, LiveTask } from "./live.ts";
import type { ManagerView } from "./managers.ts";
import { handable, letGo } from "./machine-handoff.ts";
import { planRequeue } from "./requeue.ts";
import { machineChanged } from "./transitions.ts";
import { placePendingTasks } from "../resources/machines.ts";
import type { Caller } from "../api/trpc.ts";
import { recordDecisions } from "../ops/decisions.ts";
import { DRAIN_CODES, MACHINE_HANDED } from "../ops/decision-codes.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { drainMachines, endDrains, handDrainedMachines } from "../db/sql/market-managers.ts";
import { shortId } from "@cyclemarket/client/job-file";

// An admin's move of a busy machine drains it (market/machine-moves.ts): the manager that holds
// it places no new work on it (it is not `offering`, the one rule the engine and the leases
// follow), its queued tasks go elsewhere at once, and its running leases finish or expire as any
// lease does, paid as usual. Once it holds no lease its manager hands it over by the same
// conditional update as an idle machine's move (pinned at the target), at the next stamp or at
// once; the worker follows `machine-moved`. The drain is a column of the machine's row, so it
// survives a restart of its manager; a takeover of its manager drops it (adopt.ts), and so does a
// target that is no longer live when the machine is ready: the machine then works where it is.

/**
 * Starts draining `machines` (busy opportunistic machines this manager holds) toward `to`, and
 * hands over at once those its queued tasks were all it held. Call inside `market.serial`.
 * Each machine's state: handed now, or draining.
 */
export async function startDrains(market: Market, admin: Caller, machines: LiveMachine[], to: ManagerView): Promise<Map<string, "moved" | "draining">> {
  const self = market.managerId;
  const now = market.clock.now();
  const before = new Map(machines.map((m) => [m.id, m.drainingTo]));
  const queued: LiveTask[] = [];
  for (const m of machines) {
    for (const id of m.queue) {
      const task = market.state.tasks.get(id);
      if (task && !task.leasing) queued.push(task);
    }
    // The engine must see it offer nothing before it is asked where its queued tasks go.
    m.drainingTo = to.id;
    machineChanged(market, m, now);
  }
  const undo = (ms: LiveMachine[]) => {
    for (const m of ms) {
      m.drainingTo = before.get(m.id);
      machineChanged(market, m, now);
    }
  };
  let drained: { ids: Set<string>; requeue: Awaited<ReturnType<typeof planRequeue>> };
  try {
    drained = await market.db.$transaction(async (tx) => {
      const rows = await runStatement(viaPrisma(tx), drainMachines, { from: self, to: to.id, machineIds: machines.map((m) => m.id) });
      const ids = new Set(rows.map((r) => r.id));
      const requeue = await planRequeue(market, tx, queued);
      await recordDecisions(
        market,
        tx,
        machines
          .filter((m) => ids.has(m.id))
          .map((m) => ({
            outcome: "move" as const,
            at: now,
            machineId: m.id,
            userId: m.ownerId,
            reasons: [{ code: DRAIN_CODES.started, machineId: m.id, fromManagerId: self, toManagerId: to.id, leases: m.leases.size }],
            detail: { by: admin.email },
          })),
      );
      return { ids, requeue };
    });
  } catch (e) {
    undo(machines);
    throw e;
  }
  // A row no longer this manager's (it cannot be, under the lock, but the statement is conditional): not draining.
  undo(machines.filter((m) => !drained.ids.has(m.id)));
  for (const task of queued) market.state.unqueue(task);
  drained.requeue.apply();
  const draining = machines.filter((m) => drained.ids.has(m.id));
  for (const m of draining) market.emit({ kind: "machine", machineId: m.id });
  for (const jobId of new Set(queued.map((t) => t.jobId))) {
    const job = market.state.jobs.get(jobId);
    if (job) market.emit({ kind: "job", jobId, ownerId: job.ownerId });
  }
  if (draining.length) market.log(`an admin (${admin.email}) moved ${draining.length} busy machine(s) to the Market Manager ${to.id}: draining ${draining.map((m) => shortId(m.id)).join(", ")}`);
  const handed = new Set(await handOver(market, draining.filter((m) => handable(market, m))));
  return new Map(draining.map((m) => [m.id, handed.has(m.id) ? "moved" : "draining"]));
}

/**
 * Hands over every draining machine that holds no lease now, each to the manager it drains
 * toward; one whose target is no longer live stops draining and works here again. Called at each
 * stamp (adopt.ts). How many were handed.
 */
export async function handDrained(market: Market): Promise<number> {
  const ready = () => [...market.state.machines.values()].filter((m) => m.drainingTo !== undefined && handable(market, m));
  // Looked at first without the lock, which a market busy with work should not be made to wait for.
  if (!market.managers || !ready().length) return 0;
  return market.serial(async () => (await handOver(market, ready())).length);
}

/** Hands `machines` (drained, this manager's) to their targets, or ends their drains when the target is gone. Inside `market.serial`; the machines handed. */
async function handOver(market: Market, machines: LiveMachine[]): Promise<string[]> {
  const managers = market.managers;
  if (!managers || !machines.length) return [];
  const self = managers.self.id;
  const alive = new Map(managers.alive().map((m) => [m.id, m]));
  const go = machines.filter((m) => alive.has(m.drainingTo!));
  const stay = machines.filter((m) => !alive.has(m.drainingTo!));
  const now = market.clock.now();
  const handed = go.length
    ? await market.db.$transaction(async (tx) => {
        const rows = await runStatement(viaPrisma(tx), handDrainedMachines, { from: self, machineIds: go.map((m) => m.id) });
        await recordDecisions(
          market,
          tx,
          rows.map(({ id, toManagerId }) => ({
            outcome: "move" as const,
            at: now,
            machineId: id,
            userId: market.state.machines.get(id)?.ownerId ?? null,
            reasons: [{ code: MACHINE_HANDED, fromManagerId: self, toManagerId }],
            detail: { drained: true },
          })),
        );
        return rows;
      })
    : [];
  const byTarget = new Map<string, string[]>();
  for (const { id, toManagerId } of handed) byTarget.set(toManagerId, [...(byTarget.get(toManagerId) ?? []), id]);
  for (const [to, ids] of byTarget) {
    letGo(market, ids, alive.get(to)!);
    market.log(`handed ${ids.length} drained machine(s) to the Market Manager ${to}: ${ids.map(shortId).join(", ")}`);
  }
  if (stay.length) await endHere(market, stay, DRAIN_CODES.dropped, {});
  return handed.map((r) => r.id);
}

/** Ends the drains of `machines` (this manager's, draining): they offer their capacity here again. Inside `market.serial`; the machines whose drain ended. */
export async function endHere(market: Market, machines: LiveMachine[], code: (typeof DRAIN_CODES)["cancelled" | "dropped"], detail: Record<string, unknown>): Promise<string[]> {
  const self = market.managerId;
  const now = market.clock.now();
  const ended = await market.db.$transaction(async (tx) => {
    const rows = await runStatement(viaPrisma(tx), endDrains, { from: self, machineIds: machines.map((m) => m.id) });
    const ids = new Set(rows.map((r) => r.id));
    await recordDecisions(
      market,
      tx,
      machines
        .filter((m) => ids.has(m.id))
        .map((m) => ({ outcome: "move" as const, at: now, machineId: m.id, userId: m.ownerId, reasons: [{ code, machineId: m.id, toManagerId: m.drainingTo! }], detail })),
    );
    return ids;
  });
  const back = machines.filter((m) => ended.has(m.id));
  for (const m of back) {
    m.drainingTo = undefined;
    machineChanged(market, m, now);
    market.emit({ kind: "machine", machineId: m.id });
  }
  if (back.length) {
    market.log(`${back.length} machine(s) no longer draining (${code}): ${back.map((m) => shortId(m.id)).join(", ")}`);
    // Capacity came back: tasks waiting for any machine may go there now.
    await placePendingTasks(market);
  }
  return back.map((m) => m.id);
}
