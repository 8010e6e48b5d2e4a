import { demandOf } from "./engine.ts";
import type { Market } from "./market.ts";
import type { LiveTask } from "./live.ts";
import { placementEntries, recordDecisions } from "../ops/decisions.ts";
import { PLACED_AGAIN } from "../ops/decision-codes.ts";
import { tasksPlaced } from "./transitions.ts";

type Tx = Parameters<Parameters<Market["db"]["$transaction"]>[0]>[0];

/**
 * Gives tasks that lost their machine (departure, expired lease, failed run) back to the engine
 * and records where they go. Call inside the transaction that released them; `apply` updates
 * memory after that transaction has committed.
 */
export async function planRequeue(market: Market, tx: Tx, tasks: LiveTask[]) {
  const live = tasks.filter((t) => market.state.jobs.has(t.jobId));
  const demands = live.map((t) => demandOf(t, market.state.jobs.get(t.jobId)!));
  const placement = demands.length ? market.engine.place(demands, market.clock.now()) : new Map<string, string | null>();
  const byMachine = new Map<string | null, string[]>();
  for (const t of live) {
    const to = placement.get(t.id) ?? null;
    byMachine.set(to, [...(byMachine.get(to) ?? []), t.id]);
  }
  for (const [machineId, ids] of byMachine) {
    await tx.task.updateMany({
      where: { id: { in: ids } },
      data: { machineId, status: machineId ? "queued" : "pending" },
    });
  }
  await recordDecisions(market, tx, placedAgainEntries(market, live, placement));
  return {
    apply() {
      tasksPlaced(market, live, placement);
    },
  };
}

/** Tasks given a machine again, one log line per job and machine (the engine gives no costs here). */
function placedAgainEntries(market: Market, tasks: LiveTask[], placement: Map<string, string | null>) {
  const now = market.clock.now();
  const byJob = new Map<string, { taskId: string; machineId: string }[]>();
  for (const t of tasks) {
    const machineId = placement.get(t.id);
    if (machineId) byJob.set(t.jobId, [...(byJob.get(t.jobId) ?? []), { taskId: t.id, machineId }]);
  }
  return [...byJob].flatMap(([jobId, placed]) =>
    placementEntries(placed, { at: now, jobId, userId: market.state.jobs.get(jobId)?.ownerId ?? null }, [{ code: PLACED_AGAIN }]),
  );
}
