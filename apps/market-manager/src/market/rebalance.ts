import type { Market } from "./market.ts";
import type { MoveRecord } from "./engine.ts";
import { recordDecisions } from "../ops/decisions.ts";
import { taskMoved } from "./transitions.ts";

/**
 * DESIGN.md "Rebalancing": when the policy finds a queued, unstarted task that would cost less
 * and finish no later elsewhere, it moves to that machine's queue. Running tasks never move in
 * the live market (a WebAssembly run cannot migrate between browsers). Inside the market's lock,
 * in the step that took the engine's tick: moves still possible are applied.
 */
export async function rebalance(market: Market, proposed: MoveRecord[], now: number) {
  const moves = proposed.filter((m) => {
    const task = market.state.tasks.get(m.taskId);
    return task?.state === "queued" && task.machineId === m.fromMachineId && market.state.machines.has(m.toMachineId);
  });
  if (!moves.length) return 0;
  await market.db.$transaction(async (tx) => {
    for (const m of moves) await tx.task.updateMany({ where: { id: m.taskId, status: "queued" }, data: { machineId: m.toMachineId } });
    await recordDecisions(market, tx, moves.map((m) => {
      const jobId = market.state.tasks.get(m.taskId)?.jobId ?? null;
      const userId = (jobId && market.state.jobs.get(jobId)?.ownerId) || null;
      return { outcome: "move", at: now, jobId, userId, machineId: m.toMachineId, tasks: 1, reasons: m.reasons, detail: { fromMachineId: m.fromMachineId } };
    }));
  });
  for (const m of moves) {
    taskMoved(market, market.state.tasks.get(m.taskId)!, m.toMachineId);
  }
  market.log(`rebalanced ${moves.length} queued task(s)`);
  return moves.length;
}
