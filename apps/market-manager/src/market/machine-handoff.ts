import type { Market } from "./market.ts";
import type { LiveMachine } from "./live.ts";
import type { ManagerView } from "./managers.ts";
import { loadMarket } from "./restore.ts";
import { machineLeaving } from "./transitions.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { handedMachines, handMachines, pickedUpMachines } from "../db/sql/market-managers.ts";
import { shortId } from "@cyclemarket/client/job-file";

// Machines follow the managers (the Java Market paper, section 4.4: the schedulers' subsets of
// producers change on line). When a manager joins or comes back, the others hold more than their
// share: each one above the fair share (the market's machines over its live managers, rounded up)
// hands idle machines to those below it at its next stamp. The giver decides under its own lock,
// so it hands only machines it runs nothing on; a conditional update moves each row only while it
// is still the giver's. The taker reads them in at its own next stamp, and the workers follow:
// the giver answers their next call with `machine-moved` and where to (ownMachine).

/** At most this many machines handed at one stamp: a large market rebalances over several. */
export const MAX_HANDED_PER_BEAT = 200;
/** Stamps a giver waits after a handoff before it looks again, so the takers' stamps show what they took. */
export const HANDOFF_COOLDOWN_BEATS = 3;

/**
 * Who gets how many of this manager's machines: nothing unless it holds more than the fair share.
 * While machines keep registering, every manager's count now is ahead of its last stamp, and
 * weighing one's own count now against the others' stamps would find each over its share and
 * hand machines around. So like is weighed against like, leaning toward moving nothing: `own` is
 * the least this manager held now or at its last two stamps (Managers.heldSettled), no later than
 * the others' stamps, and another's count is its stamp's plus `unstamped`, the machines it may
 * have gained since (Managers.unstamped). A manager really over its share, one that counts alike
 * however it is looked at, hands machines as before.
 */
export function handoffPlan(view: readonly ManagerView[], selfId: string, own: number, unstamped: (m: ManagerView) => number = () => 0): { to: ManagerView; count: number }[] {
  const alive = view.filter((m) => m.alive);
  if (alive.length < 2 || !alive.some((m) => m.id === selfId)) return [];
  const held = (m: ManagerView) => (m.id === selfId ? own : m.machines + unstamped(m));
  const total = alive.reduce((s, m) => s + held(m), 0);
  const fair = Math.ceil(total / alive.length);
  let surplus = Math.min(own - fair, MAX_HANDED_PER_BEAT);
  const plan: { to: ManagerView; count: number }[] = [];
  for (const m of alive.filter((x) => x.id !== selfId && held(x) < fair).sort((a, b) => held(a) - held(b) || a.id.localeCompare(b.id))) {
    if (surplus <= 0) break;
    const count = Math.min(surplus, fair - held(m));
    plan.push({ to: m, count });
    surplus -= count;
  }
  return plan;
}

/**
 * Hands idle machines to managers below the fair share, as `handoffPlan` says, when `act`; the
 * caller acts only on a plan found at two stamps in a row (a manager's counts in the view are its
 * last stamp's, and a blip of them, machines registering meanwhile, must not move machines back
 * and forth). Only `handable` machines, and none an admin placed here (market/machine-moves.ts).
 * Whether there was a plan, and how many machines were handed.
 */
export async function handOff(market: Market, act: boolean): Promise<{ planned: boolean; handed: number }> {
  const managers = market.managers;
  if (!managers) return { planned: false, handed: 0 };
  // Looked at first without the lock, which a market busy with work should not be made to wait for.
  const unstamped = (m: ManagerView) => managers.unstamped(m.id);
  const planned = handoffPlan(managers.view, managers.self.id, managers.heldSettled(market.state.machines.size), unstamped).length > 0;
  if (!planned || !act) return { planned, handed: 0 };
  return market.serial(async () => {
    const plan = handoffPlan(managers.view, managers.self.id, managers.heldSettled(market.state.machines.size), unstamped);
    if (!plan.length) return { planned: false, handed: 0 };
    // A draining machine goes where the admin sent it (machine-drains.ts), not where the fair share would.
    const idle = new Set([...market.state.machines.values()].filter((m) => handable(market, m) && m.drainingTo === undefined).map((m) => m.id));
    let handed = 0;
    for (const { to, count } of plan) {
      if (!idle.size) break;
      // Every idle machine is a candidate: the statement takes `count` of those an admin did not place here.
      const moved = await runStatement(viaPrisma(market.db), handMachines, { from: managers.self.id, to: to.id, machineIds: [...idle], count });
      for (const { id } of moved) idle.delete(id);
      letGo(market, moved.map((m) => m.id), to);
      handed += moved.length;
      if (moved.length) market.log(`handed ${moved.length} idle machine(s) to the Market Manager ${to.id}: ${moved.map((m) => shortId(m.id)).join(", ")}`);
    }
    return { planned: true, handed };
  });
}

/**
 * Whether a machine may be handed to another manager now: an opportunistic machine with no lease
 * and nothing queued, and no lapsed lease whose run may still report its task's first result
 * (`lateUntil`; only the manager holding the machine hears a late result). A dedicated machine's contract, and tasks placed on a machine, stay with the
 * manager that holds them; a machine offered to several managers is each one's through a row of
 * its own, which does not move (a manager would hold it twice).
 */
export const handable = (market: Market, m: LiveMachine) => movable(m) && m.leases.size === 0 && m.queue.length === 0 && !awaitsLateResult(market, m);

/** A run of one of the machine's lapsed leases may still report its undecided task's first result. */
function awaitsLateResult(market: Market, m: LiveMachine): boolean {
  if ((m.lateUntil ?? 0) <= market.clock.now()) return false;
  for (const l of market.state.lateLeases.values()) if (l.machineId === m.id) return true;
  return false;
}

/**
 * Whether a machine may move to another manager at all, once idle: an opportunistic machine held
 * by this manager alone whose worker follows a move (a browser page behind the web app does not:
 * told `machine-moved` it would register again, and the market would count it twice).
 */
export const movable = (m: LiveMachine) => m.kind === "opportunistic" && !m.offerKey && m.follows === true;

/**
 * Machines whose rows now name `to` leave this manager's memory; call inside `market.serial`.
 * Their workers are told where they went at their next call here (`machine-moved`).
 */
export function letGo(market: Market, machineIds: readonly string[], to: ManagerView): void {
  for (const id of machineIds) {
    machineLeaving(market, id);
    market.state.machines.delete(id);
    market.managers?.movedAway(id, to);
    // Its work stream wakes, finds the machine gone elsewhere and says so: the worker follows now.
    market.emit({ kind: "machine", machineId: id });
  }
}

/**
 * Reads into memory the machines another manager handed to this one, as a restart reads its own:
 * with a fresh timeout, so their workers have time to find their way here. How many.
 */
export async function pickUpHanded(market: Market): Promise<number> {
  const managers = market.managers;
  // Machines are handed only by another manager: a market that has only ever had this one has none.
  if (!managers || managers.view.length < 2) return 0;
  const run = viaPrisma(market.db);
  const waiting = await runStatement(run, handedMachines, { managerId: managers.self.id });
  if (!waiting.length) return 0;
  return market.serial(async () => {
    const ids = waiting.map((r) => r.id).filter((id) => !market.state.machines.has(id));
    if (ids.length) await loadMarket(market, { machineIds: ids, jobIds: [] });
    const now = market.clock.now();
    for (const id of ids) {
      const m = market.state.machines.get(id);
      if (m) m.lastHeartbeatAt = Math.max(m.lastHeartbeatAt, now);
      managers.cameBack(id);
      market.emit({ kind: "machine", machineId: id });
    }
    // Cleared once in memory: a failure before this leaves them waiting for the next stamp.
    await runStatement(run, pickedUpMachines, { managerId: managers.self.id, machineIds: waiting.map((r) => r.id) });
    if (ids.length) market.log(`took ${ids.length} machine(s) handed by another Market Manager`);
    return ids.length;
  });
}
