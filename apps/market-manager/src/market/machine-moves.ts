import { z } from "zod";
import type { MarketReason } from "@cyclemarket/costbenefit";
import type { Market } from "./market.ts";
import type { LiveMachine } from "./live.ts";
import type { ManagerView } from "./managers.ts";
import { handable, letGo, movable } from "./machine-handoff.ts";
import { endHere, startDrains } from "./machine-drains.ts";
import { callManager } from "./shopping.ts";
import type { Caller, Context } from "../api/trpc.ts";
import { refuse } from "../api/errors.ts";
import { recordDecisions } from "../ops/decisions.ts";
import { DRAIN_CODES, MACHINE_HANDED } from "../ops/decision-codes.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { adminHandMachines, machineHolders } from "../db/sql/market-managers.ts";
import { shortId } from "@cyclemarket/client/job-file";

// An admin moves machines between Market Managers on line (the Java Market paper, section 4.4:
// the schedulers' subsets of producers change on line). The same handoff as the fair share
// (machine-handoff.ts): the manager that holds a machine lets it go, under its own lock and with
// a conditional update, and the taker reads it in at its next stamp; the worker follows the
// giver's `machine-moved` answer. An idle opportunistic machine moves at once; a busy one drains
// first (machine-drains.ts: no new work, its leases end, then it moves), and an admin may cancel
// the drain. A dedicated machine is refused: its contract stays with its manager until it ends.
// A moved machine is pinned: the fair share does not hand it back.

/** Machines one call may name. */
export const MAX_MACHINES_MOVED = 500;

export const MoveMachines = z.object({
  machineIds: z
    .array(z.string().uuid("Not a machine id."))
    .min(1, "Name at least one machine.")
    .max(MAX_MACHINES_MOVED, `At most ${MAX_MACHINES_MOVED} machines move in one call.`),
  toManager: z.string().trim().min(1, "Name the Market Manager to move them to.").max(200),
});
export type MoveMachines = z.infer<typeof MoveMachines>;

/** The machines whose drains an admin cancels (each held by whichever manager). */
export const CancelDrains = z.object({
  machineIds: MoveMachines.shape.machineIds,
});
export type CancelDrains = z.infer<typeof CancelDrains>;

/**
 * Each machine named: moved now, draining (it moves once its leases end; `reason` says toward
 * where, with how many leases), or refused with why. `moved` is true only for the first.
 */
export type MachineMove =
  | { machineId: string; moved: true; state: "moved" }
  | { machineId: string; moved: false; state: "draining"; reason: MarketReason }
  | { machineId: string; moved: false; state: "refused"; reason: MarketReason };

/** Each machine named: its drain cancelled, or why not. */
export type DrainCancel = { machineId: string; cancelled: true } | { machineId: string; cancelled: false; reason: MarketReason };

const refused = (machineId: string, reason: MarketReason): MachineMove => ({ machineId, moved: false, state: "refused", reason });

/** How long the manager holding machines may take to let them go. */
const MOVE_CALL_TIMEOUT_MS = 10_000;

/**
 * Moves the machines named to `toManager`: each group to the manager that holds it, this one's
 * here and the others' sent to their holder (a call sent on by another manager acts only on this
 * one's own machines). Refused whole when the target is not a live manager.
 */
export async function moveMachines(market: Market, ctx: Context, admin: Caller, input: MoveMachines): Promise<{ toManager: string; moves: MachineMove[] }> {
  const managers = market.managers;
  const target = managers?.alive().find((m) => m.id === input.toManager);
  if (!managers || !target) throw refuse.badRequest({ code: "manager-not-live", managerId: input.toManager }, `The Market Manager ${input.toManager} is not live: machines move only between live managers.`);
  const moves = await atHolders<MachineMove>(market, ctx, input.machineIds, {
    here: (group) => letGoHere(market, admin, group, target),
    procedure: "admin.moveMachines",
    input: (group) => ({ machineIds: group, toManager: target.id }),
    answer: (data) => (data as { moves: MachineMove[] }).moves,
    refused,
    // Already there: nothing to do, whoever holds it.
    before: (id, holder) => (holder === target.id ? refused(id, { code: "machine-already-there", machineId: id, managerId: target.id }) : undefined),
  });
  return { toManager: target.id, moves };
}

/** Cancels the drains of the machines named, each at the manager that holds it: they take work where they are again. */
export async function cancelDrains(market: Market, ctx: Context, admin: Caller, input: CancelDrains): Promise<{ cancels: DrainCancel[] }> {
  const cancels = await atHolders<DrainCancel>(market, ctx, input.machineIds, {
    here: (group) => cancelHere(market, admin, group),
    procedure: "admin.cancelDrains",
    input: (group) => ({ machineIds: group }),
    answer: (data) => (data as { cancels: DrainCancel[] }).cancels,
    refused: (machineId, reason) => ({ machineId, cancelled: false, reason }),
  });
  return { cancels };
}

/** How a call about machines is answered, per machine, by the managers that hold them. */
interface AtHolders<T> {
  /** This manager's own machines among those named. */
  here: (ids: string[]) => Promise<T[]>;
  /** The same call sent on to another holder, with its input for that holder's machines. */
  procedure: string;
  input: (ids: string[]) => unknown;
  answer: (data: unknown) => T[];
  refused: (machineId: string, reason: MarketReason) => T;
  /** An answer decided from the holder alone, before any call. */
  before?: (machineId: string, holder: string | null) => T | undefined;
}

/** Each machine named answered by the manager that holds it (this one, or another sent the call), in the order named. */
async function atHolders<T extends { machineId: string }>(market: Market, ctx: Context, machineIds: string[], how: AtHolders<T>): Promise<T[]> {
  const managers = market.managers!;
  const ids = [...new Set(machineIds)];
  if (ctx.credentials?.forwarded) return how.here(ids);
  const self = managers.self.id;
  const rows = await runStatement(viaPrisma(market.db), machineHolders, { machineIds: ids });
  const holderOf = new Map(rows.map((r) => [r.id, r.managerId]));
  const answers: T[] = [];
  const byHolder = new Map<string, string[]>();
  for (const id of ids) {
    const holder = holderOf.get(id);
    const early = holder === undefined ? how.refused(id, { code: "not-found", what: "machine" }) : how.before?.(id, holder);
    if (early) answers.push(early);
    else byHolder.set(holder ?? "", [...(byHolder.get(holder ?? "") ?? []), id]);
  }
  const alive = new Map(managers.alive().map((m) => [m.id, m]));
  const groups = await Promise.all(
    [...byHolder].map(async ([holder, group]): Promise<T[]> => {
      if (holder === self) return how.here(group);
      const at = alive.get(holder);
      // A silent manager's machines move when another takes it over, not by an admin's hand.
      if (!at) return group.map((id) => how.refused(id, { code: "manager-not-live", managerId: holder || "none" }));
      try {
        const answer = await callManager(market, at, how.procedure, { body: JSON.stringify(how.input(group)), batch: false }, ctx, MOVE_CALL_TIMEOUT_MS);
        if (answer.ok) return how.answer(answer.data);
      } catch {
        // Unreachable now: said below as the manager not being live.
      }
      return group.map((id) => how.refused(id, { code: "manager-not-live", managerId: holder }));
    }),
  );
  const all = [...answers, ...groups.flat()];
  const order = new Map(ids.map((id, i) => [id, i]));
  return all.sort((a, b) => order.get(a.machineId)! - order.get(b.machineId)!);
}

/**
 * This manager lets its own idle machines among `ids` go to `to`, and starts draining its busy
 * ones toward it; each move is in the decision log.
 */
async function letGoHere(market: Market, admin: Caller, ids: string[], to: ManagerView): Promise<MachineMove[]> {
  const self = market.managerId;
  return market.serial(async () => {
    const moves = new Map<string, MachineMove>();
    const ready: string[] = [];
    const busy: LiveMachine[] = [];
    for (const id of ids) {
      const m = market.state.machines.get(id);
      // Not in this manager's memory: handed to it and not yet read in, or held by another after all.
      if (!m) moves.set(id, refused(id, { code: "not-found", what: "machine" }));
      else if (m.kind === "dedicated") moves.set(id, refused(id, { code: "machine-dedicated", machineId: id, contractEndsAt: m.departsAt ?? 0 }));
      else if (m.offerKey) moves.set(id, refused(id, { code: "machine-offered-to-several", machineId: id }));
      else if (!movable(m)) moves.set(id, refused(id, { code: "machine-cannot-follow", machineId: id }));
      else if (handable(market, m)) ready.push(id);
      else busy.push(m);
    }
    const now = market.clock.now();
    const moved = ready.length
      ? await market.db.$transaction(async (tx) => {
          const rows = await runStatement(viaPrisma(tx), adminHandMachines, { from: self, to: to.id, machineIds: ready });
          await recordDecisions(
            market,
            tx,
            rows.map(({ id }) => ({
              outcome: "move" as const,
              at: now,
              machineId: id,
              userId: market.state.machines.get(id)?.ownerId ?? null,
              reasons: [{ code: MACHINE_HANDED, fromManagerId: self, toManagerId: to.id }],
              detail: { by: admin.email },
            })),
          );
          return rows.map((r) => r.id);
        })
      : [];
    letGo(market, moved, to);
    for (const id of ready) moves.set(id, moved.includes(id) ? { machineId: id, moved: true, state: "moved" } : refused(id, { code: "not-found", what: "machine" }));
    if (moved.length) market.log(`an admin (${admin.email}) moved ${moved.length} machine(s) to the Market Manager ${to.id}: ${moved.map(shortId).join(", ")}`);
    const leases = new Map(busy.map((m) => [m.id, m.leases.size]));
    const drains = busy.length ? await startDrains(market, admin, busy, to) : new Map<string, "moved" | "draining">();
    for (const m of busy) {
      const state = drains.get(m.id);
      if (state === "moved") moves.set(m.id, { machineId: m.id, moved: true, state: "moved" });
      else if (state === "draining")
        moves.set(m.id, { machineId: m.id, moved: false, state: "draining", reason: { code: "machine-draining", machineId: m.id, fromManagerId: self, toManagerId: to.id, leases: leases.get(m.id)! } });
      else moves.set(m.id, refused(m.id, { code: "not-found", what: "machine" }));
    }
    return ids.map((id) => moves.get(id)!);
  });
}

/** This manager ends the drains of its own machines among `ids`, each in the decision log with the admin's name. */
async function cancelHere(market: Market, admin: Caller, ids: string[]): Promise<DrainCancel[]> {
  return market.serial(async () => {
    const answers = new Map<string, DrainCancel>();
    const draining: LiveMachine[] = [];
    for (const id of ids) {
      const m = market.state.machines.get(id);
      if (!m) answers.set(id, { machineId: id, cancelled: false, reason: { code: "not-found", what: "machine" } });
      else if (m.drainingTo === undefined) answers.set(id, { machineId: id, cancelled: false, reason: { code: "machine-not-draining", machineId: id } });
      else draining.push(m);
    }
    const ended = new Set(draining.length ? await endHere(market, draining, DRAIN_CODES.cancelled, { by: admin.email }) : []);
    for (const m of draining) answers.set(m.id, ended.has(m.id) ? { machineId: m.id, cancelled: true } : { machineId: m.id, cancelled: false, reason: { code: "machine-not-draining", machineId: m.id } });
    return ids.map((id) => answers.get(id)!);
  });
}
