import type { Market } from "./market.ts";
import type { ManagerView } from "./managers.ts";
import { loadMarket } from "./restore.ts";
import { handOff, HANDOFF_COOLDOWN_BEATS, pickUpHanded } from "./machine-handoff.ts";
import { handDrained } from "./machine-drains.ts";
import { discardIntake, INTAKE } from "../tasks/intake.ts";
import { opsOf } from "../ops/ops.ts";
import { learnForgeries } from "./standing.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { claimDeadManager, moveManagerJobs, moveManagerMachines } from "../db/sql/market-managers.ts";
import { departMachine } from "../resources/machines.ts";

/**
 * Takes over a dead manager (silent past the timeout): its row is claimed, and its active
 * machines and open jobs move to this manager, in one transaction of conditional updates. The
 * claim holds the dead manager's row locked until the rows have moved, and a manager restarting
 * under that name waits for it (Managers.join), so every row has one manager: two survivors
 * claiming at once find the row claimed (or stamped again) and move nothing.
 *
 * What moved is then read into memory as a restart reads its own (restore.ts loadMarket): the
 * machines get a fresh timeout, so their workers have time to find their new manager, and the
 * leases the time the dead manager was silent; a lease whose machine went elsewhere is placed again.
 * Its rows of machines offered to several then depart (`manager-gone`) as any machine departs
 * (departMachine: its leases end, its tasks are placed again): the others hold rows of those
 * machines already, and a taker holding two rows of one machine would count its slots twice.
 * Whether anything was taken.
 */
export async function takeOver(market: Market, dead: ManagerView): Promise<boolean> {
  const managers = market.managers;
  if (!managers) return false;
  const me = managers.self.id;
  const timeoutMs = managers.self.timeoutMs;
  const moved = await market.db.$transaction(async (tx) => {
    const run = viaPrisma(tx);
    const claimed = await runStatement(run, claimDeadManager, { me, dead: dead.id, timeoutMs });
    if (!claimed.length) return null;
    const machines = await runStatement(run, moveManagerMachines, { from: dead.id, to: me });
    const jobs = await runStatement(run, moveManagerJobs, { from: dead.id, to: me });
    return { silentMs: claimed[0]!.silentMs, machineIds: machines.map((m) => m.id), offeredIds: machines.filter((m) => m.offered).map((m) => m.id), jobIds: jobs.map((j) => j.id) };
  });
  if (!moved) return false;
  await market.serial(async () => {
    // A submission the dead manager had not decided yet: its consumer got no answer and paid nothing.
    const interrupted = await market.db.job.findMany({ where: { ...INTAKE, id: { in: moved.jobIds } }, select: { id: true } });
    for (const { id } of interrupted) await discardIntake(market.db, id);
    const jobIds = moved.jobIds.filter((id) => !interrupted.some((j) => j.id === id));
    const leasesBefore = new Set(market.state.leases.keys());
    const loaded = await loadMarket(market, { machineIds: moved.machineIds, jobIds });
    const now = market.clock.now();
    for (const id of moved.machineIds) {
      const m = market.state.machines.get(id);
      if (m) m.lastHeartbeatAt = Math.max(m.lastHeartbeatAt, now);
    }
    for (const [id, lease] of market.state.leases) if (!leasesBefore.has(id)) lease.expiresAt += Math.max(0, moved.silentMs);
    // Read in first so that their leases and queued tasks are known, then gone by the one path a
    // departure takes. (Should this manager stop before they depart, they are its own rows: a
    // restart reads them in and they miss their heartbeats; a takeover departs them here.)
    for (const id of moved.offeredIds) {
      await departMachine(market, id, "manager-gone").catch((e: unknown) => market.log(`a machine offered to several could not depart after a takeover (its heartbeats' timeout will end it): ${e instanceof Error ? e.message : String(e)}`));
    }
    opsOf(market).metrics.takeovers.inc();
    market.log(
      `took over the Market Manager ${dead.id} (silent ${Math.round(moved.silentMs)} ms): ${loaded.machines - moved.offeredIds.length} machines, ${loaded.jobs} open jobs` +
        (moved.offeredIds.length ? `, ${moved.offeredIds.length} row(s) of machines offered to several managers departed` : "") +
        (interrupted.length ? `, ${interrupted.length} undecided submission(s) removed` : ""),
    );
    for (const id of moved.machineIds) if (!moved.offeredIds.includes(id)) market.emit({ kind: "machine", machineId: id });
  });
  return true;
}

/** How often a manager stamps its row and looks for dead ones. */
export const MANAGER_BEAT_MS = 1000;

/**
 * Stamps this manager's row every MANAGER_BEAT_MS, takes over any manager silent past the
 * timeout, learns of accounts another manager caught forging (standing.ts), reads in machines
 * handed to it, hands over drained machines (machine-drains.ts), and hands idle machines to
 * managers below the fair share (machine-handoff.ts). `fenced` is called when this manager finds
 * it was itself taken over (it was silent too long, say stopped by its host): what it held
 * belongs to another now.
 */
export function startManagerBeat(market: Market, fenced: () => void): () => void {
  const managers = market.managers;
  if (!managers) return () => {};
  let running = false;
  let stopped = false;
  /** Stamps left before this manager may hand machines away again (machine-handoff.ts). */
  let cooldown = 0;
  /** The last stamp found machines to hand away: this one hands them if it finds so too. */
  let wanted = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = true;
    void (async () => {
      const tasksDone = (await opsOf(market).metrics.reports.get()).values.filter((v) => v.labels.outcome === "succeeded").reduce((s, v) => s + v.value, 0);
      const stamped = await managers.beat({ machines: market.state.machines.size, jobs: market.state.jobs.size, tasksDone });
      if (!stamped) {
        stopped = true;
        market.log(`this Market Manager (${managers.self.id}) was taken over by another after being silent; stopping`, { level: "error" });
        fenced();
        return;
      }
      if (!managers.ready) return;
      for (const dead of managers.dead()) await takeOver(market, dead);
      await learnForgeries(market, managers.self.timeoutMs);
      await pickUpHanded(market);
      await handDrained(market);
      if (cooldown > 0) cooldown--;
      else {
        const { planned, handed } = await handOff(market, wanted);
        wanted = planned && handed === 0;
        if (handed > 0) cooldown = HANDOFF_COOLDOWN_BEATS;
      }
    })()
      .catch((e: unknown) => market.log(`managers' heartbeat failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => (running = false));
  }, MANAGER_BEAT_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
