import type { Market } from "./market.ts";
import type { MoveRecord } from "./engine.ts";
import { countDecisions, type DecisionEntry } from "../ops/decisions.ts";
import { taskMoved } from "./transitions.ts";
import { siblingOn } from "./replicas.ts";
import { inOrder } from "../tasks/report-batch.ts";
import { toJson } from "../db/client.ts";
import type { RunStatement } from "../tasks/report-rows.ts";
import { rowId } from "../db/row-id.ts";
import { runStatement } from "../db/sql/statement.ts";
import { moveTasks } from "../db/sql/task-rows.ts";

/**
 * docs/DESIGN.md "Rebalancing": when the policy finds a queued, unstarted task that would cost less
 * and finish no later elsewhere, it moves to that machine's queue. Running tasks never move in
 * the live market (a WebAssembly run cannot migrate between browsers). On the market's lock, in
 * the step that took the engine's tick, from memory: the moves still possible (the task queued
 * where the engine saw it, no lease of it in the journal, the machine still here, no other copy
 * of the task on a machine of its owner) are applied at
 * once and their one statement goes to the journal (market/journal.ts).
 *
 * Memory moves ahead of the statement, unlike money: a queued task's machine in its row is only
 * where recovery queues it again, and every later statement that leases the task writes the
 * machine that leased it, so the journal's order keeps the row right; a statement that failed
 * leaves the task queued where it was in the database, which recovery may use (it is said in the
 * log) and nothing else reads.
 */
export function rebalance(market: Market, proposed: MoveRecord[], now: number): number {
  // A copy of a task never moves next to another copy of it (costbenefit copyConflict, as the planner places them).
  const moves = proposed.filter((m) => {
    const task = market.state.tasks.get(m.taskId);
    return task?.state === "queued" && !task.leasing && task.machineId === m.fromMachineId && market.state.machines.has(m.toMachineId) && !siblingOn(market.state, task, m.toMachineId, true);
  });
  if (!moves.length) return 0;
  const decisions: DecisionEntry[] = moves.map((m) => {
    const jobId = market.state.tasks.get(m.taskId)?.jobId ?? null;
    const userId = (jobId && market.state.jobs.get(jobId)?.ownerId) || null;
    return { outcome: "move", at: now, jobId, userId, machineId: m.toMachineId, tasks: 1, reasons: m.reasons, detail: { fromMachineId: m.fromMachineId } };
  });
  for (const m of moves) taskMoved(market, market.state.tasks.get(m.taskId)!, m.toMachineId);
  market.journal.add({
    kind: "moves",
    write: () => writeMoves(inOrder(market), moves, decisions),
    applied: () => {
      countDecisions(market, decisions);
      market.log(`rebalanced ${moves.length} queued task(s)`);
    },
    failed: (e) => market.log(`${moves.length} queued task(s) moved in memory, not in the database (recovery queues them where they were): ${e instanceof Error ? e.message : String(e)}`),
  });
  return moves.length;
}

/** The moves and their entries in the decision log, one statement (db/sql/task-rows.ts moveTasks). */
function writeMoves(run: RunStatement, moves: MoveRecord[], decisions: DecisionEntry[]) {
  return runStatement(run, moveTasks, {
    taskIds: moves.map((m) => m.taskId),
    machineIds: moves.map((m) => m.toMachineId),
    decisionIds: decisions.map(() => rowId()),
    at: decisions.map((d) => d.at),
    jobIds: decisions.map((d) => d.jobId ?? null),
    userIds: decisions.map((d) => d.userId ?? null),
    reasons: decisions.map((d) => JSON.stringify(toJson(d.reasons))),
    details: decisions.map((d) => JSON.stringify(toJson(d.detail))),
  });
}
