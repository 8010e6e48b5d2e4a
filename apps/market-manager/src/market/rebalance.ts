import type { Market } from "./market.ts";
import type { MoveRecord } from "./engine.ts";
import { countDecisions, type DecisionEntry } from "../ops/decisions.ts";
import { taskMoved } from "./transitions.ts";
import { inOrder } from "../tasks/report-batch.ts";
import { toJson } from "../db/client.ts";
import type { RunStatement } from "../tasks/report-rows.ts";
import { rowId } from "../db/row-id.ts";

/**
 * docs/DESIGN.md "Rebalancing": when the policy finds a queued, unstarted task that would cost less
 * and finish no later elsewhere, it moves to that machine's queue. Running tasks never move in
 * the live market (a WebAssembly run cannot migrate between browsers). On the market's lock, in
 * the step that took the engine's tick, from memory: the moves still possible (the task queued
 * where the engine saw it, no lease of it in the journal, the machine still here) are applied at
 * once and their one statement goes to the journal (market/journal.ts).
 *
 * Memory moves ahead of the statement, unlike money: a queued task's machine in its row is only
 * where recovery queues it again, and every later statement that leases the task writes the
 * machine that leased it, so the journal's order keeps the row right; a statement that failed
 * leaves the task queued where it was in the database, which recovery may use (it is said in the
 * log) and nothing else reads.
 */
export function rebalance(market: Market, proposed: MoveRecord[], now: number): number {
  const moves = proposed.filter((m) => {
    const task = market.state.tasks.get(m.taskId);
    return task?.state === "queued" && !task.leasing && task.machineId === m.fromMachineId && market.state.machines.has(m.toMachineId);
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

/** The moves and their entries in the decision log, one statement; a task leased meanwhile keeps its row. */
const MOVES_SQL = `
WITH moved AS (
  UPDATE "Task" t SET "machineId" = m.machine
  FROM unnest($1::text[], $2::text[]) AS m(id, machine) WHERE t.id = m.id AND t.id = ANY($1::text[]) AND t.status = 'queued'::"TaskStatus"
  RETURNING 1
), decisions AS (
  INSERT INTO "MarketDecision" (id, at, outcome, "jobId", "machineId", "userId", tasks, reasons, detail)
  SELECT d.id, timestamp 'epoch' + d.at * interval '1 millisecond', 'move'::"DecisionOutcome", d.job, d.machine, d.owner, 1, d.reasons::jsonb, d.detail::jsonb
  FROM unnest($8::text[], $3::float8[], $4::text[], $2::text[], $5::text[], $6::text[], $7::text[]) AS d(id, at, job, machine, owner, reasons, detail)
  RETURNING 1
)
SELECT (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM decisions) AS decisions`;

function writeMoves(run: RunStatement, moves: MoveRecord[], decisions: DecisionEntry[]) {
  return run("rebalance", MOVES_SQL, [
    moves.map((m) => m.taskId),
    moves.map((m) => m.toMachineId),
    decisions.map((d) => d.at),
    decisions.map((d) => d.jobId ?? null),
    decisions.map((d) => d.userId ?? null),
    decisions.map((d) => JSON.stringify(toJson(d.reasons))),
    decisions.map((d) => JSON.stringify(toJson(d.detail))),
    decisions.map(() => rowId()),
  ]);
}
