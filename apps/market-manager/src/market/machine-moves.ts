import { z } from "zod";
import type { MarketReason } from "@cyclemarket/costbenefit";
import type { Market } from "./market.ts";
import type { ManagerView } from "./managers.ts";
import { handable, letGo } from "./machine-handoff.ts";
import { callManager } from "./shopping.ts";
import type { Caller, Context } from "../api/trpc.ts";
import { refuse } from "../api/errors.ts";
import { recordDecisions } from "../ops/decisions.ts";
import { MACHINE_HANDED } from "../ops/decision-codes.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { adminHandMachines, machineHolders } from "../db/sql/market-managers.ts";
import { shortId } from "@cyclemarket/client/job-file";

// An admin moves machines between Market Managers on line (the Java Market paper, section 4.4:
// the schedulers' subsets of producers change on line). The same handoff as the fair share
// (machine-handoff.ts): the manager that holds a machine lets it go, under its own lock and with
// a conditional update, and the taker reads it in at its next stamp; the worker follows the
// giver's `machine-moved` answer. Only idle opportunistic machines move; any other is refused with
// the reason. A moved machine is pinned: the fair share does not hand it back.

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

/** Each machine named: moved, or why not. */
export type MachineMove = { machineId: string; moved: true } | { machineId: string; moved: false; reason: MarketReason };

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
  const ids = [...new Set(input.machineIds)];
  const self = managers.self.id;
  if (ctx.credentials?.forwarded) return { toManager: target.id, moves: await letGoHere(market, admin, ids, target) };

  const rows = await runStatement(viaPrisma(market.db), machineHolders, { machineIds: ids });
  const holderOf = new Map(rows.map((r) => [r.id, r.managerId]));
  const moves: MachineMove[] = [];
  const byHolder = new Map<string, string[]>();
  for (const id of ids) {
    const holder = holderOf.get(id);
    if (holder === undefined) moves.push({ machineId: id, moved: false, reason: { code: "not-found", what: "machine" } });
    else if (holder === target.id) moves.push({ machineId: id, moved: false, reason: { code: "machine-already-there", machineId: id, managerId: target.id } });
    else byHolder.set(holder ?? "", [...(byHolder.get(holder ?? "") ?? []), id]);
  }
  const alive = new Map(managers.alive().map((m) => [m.id, m]));
  const groups = await Promise.all(
    [...byHolder].map(async ([holder, group]): Promise<MachineMove[]> => {
      if (holder === self) return letGoHere(market, admin, group, target);
      const at = alive.get(holder);
      // A silent manager's machines move when another takes it over, not by an admin's hand.
      if (!at) return group.map((id) => ({ machineId: id, moved: false, reason: { code: "manager-not-live", managerId: holder || "none" } }));
      try {
        const answer = await callManager(market, at, "admin.moveMachines", { body: JSON.stringify({ machineIds: group, toManager: target.id }), batch: false }, ctx, MOVE_CALL_TIMEOUT_MS);
        if (answer.ok) return (answer.data as { moves: MachineMove[] }).moves;
      } catch {
        // Unreachable now: said below as the manager not being live.
      }
      return group.map((id) => ({ machineId: id, moved: false, reason: { code: "manager-not-live", managerId: holder } }));
    }),
  );
  const all = [...moves, ...groups.flat()];
  const order = new Map(ids.map((id, i) => [id, i]));
  return { toManager: target.id, moves: all.sort((a, b) => order.get(a.machineId)! - order.get(b.machineId)!) };
}

/** This manager lets its own idle machines among `ids` go to `to`, and records each move in the decision log. */
async function letGoHere(market: Market, admin: Caller, ids: string[], to: ManagerView): Promise<MachineMove[]> {
  const self = market.managerId;
  return market.serial(async () => {
    const moves = new Map<string, MachineMove>();
    const ready: string[] = [];
    for (const id of ids) {
      const m = market.state.machines.get(id);
      // Not in this manager's memory: handed to it and not yet read in, or held by another after all.
      if (!m) moves.set(id, { machineId: id, moved: false, reason: { code: "not-found", what: "machine" } });
      else if (m.kind === "dedicated") moves.set(id, { machineId: id, moved: false, reason: { code: "machine-dedicated", machineId: id } });
      else if (m.offerKey) moves.set(id, { machineId: id, moved: false, reason: { code: "machine-offered-to-several", machineId: id } });
      else if (!handable(m)) moves.set(id, { machineId: id, moved: false, reason: { code: "machine-busy", machineId: id, leases: m.leases.size, queued: m.queue.length } });
      else ready.push(id);
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
    for (const id of ready) moves.set(id, moved.includes(id) ? { machineId: id, moved: true } : { machineId: id, moved: false, reason: { code: "not-found", what: "machine" } });
    if (moved.length) market.log(`an admin (${admin.email}) moved ${moved.length} machine(s) to the Market Manager ${to.id}: ${moved.map(shortId).join(", ")}`);
    return ids.map((id) => moves.get(id)!);
  });
}
