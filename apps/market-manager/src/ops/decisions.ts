import type { Db } from "../db/client.ts";
import { toJson } from "../db/client.ts";
import type { DecisionOutcome } from "../db/generated/enums.ts";
import type { Market } from "../market/market.ts";
import type { Decision, Reason } from "../market/engine.ts";
import { opsOf } from "./ops.ts";
import { rowId } from "../db/row-id.ts";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export interface DecisionEntry {
  outcome: DecisionOutcome;
  at: number;
  jobId?: string | null;
  machineId?: string | null;
  userId?: string | null;
  tasks?: number;
  reasons: Reason[];
  detail?: Record<string, unknown> | null;
}

/**
 * Writes decisions to the log in the transaction that applies them, so the log says exactly what
 * the market did, and counts them for /metrics and the history.
 */
export async function recordDecisions(market: Market, tx: Tx, entries: DecisionEntry[]): Promise<void> {
  if (!entries.length) return;
  await tx.marketDecision.createMany({
    data: entries.map((e) => ({
      id: rowId(),
      outcome: e.outcome,
      at: new Date(e.at),
      jobId: e.jobId ?? null,
      machineId: e.machineId ?? null,
      userId: e.userId ?? null,
      tasks: e.tasks ?? 0,
      reasons: toJson(e.reasons),
      ...(e.detail ? { detail: toJson(e.detail) } : {}),
    })),
  });
  countDecisions(market, entries);
}

/** Counts decisions written to the log for /metrics and the history. */
export function countDecisions(market: Market, entries: DecisionEntry[]): void {
  const ops = opsOf(market);
  for (const e of entries) {
    ops.metrics.decisions.inc({ outcome: e.outcome });
    if (e.outcome === "admission") ops.interval.admissions += 1;
    if (e.outcome === "delay") ops.interval.delays += 1;
    if (e.outcome === "rejection") ops.interval.rejections += 1;
  }
}

const OUTCOME = { admitted: "admission", delayed: "delay", rejected: "rejection" } as const;

/**
 * A job's admission, delay or rejection, and for an admission one placement per machine that
 * received its tasks, with the engine's marginal cost and the latest expected finish there.
 */
export function jobDecisionEntries(d: Decision, reasons: Reason[], job: { id: string; ownerId: string; tasks: number }, at: number): DecisionEntry[] {
  const base = { at, jobId: job.id, userId: job.ownerId };
  if (d.outcome !== "admitted") return [{ ...base, outcome: OUTCOME[d.outcome], tasks: job.tasks, reasons }];
  const entries: DecisionEntry[] = [
    { ...base, outcome: "admission", tasks: job.tasks, reasons, detail: { price: d.price, completionAt: d.completionAt, priceParts: d.priceParts ?? null } },
  ];
  return [...entries, ...placementEntries(d.placements, base)];
}

type Placed = { taskId: string; machineId: string; marginalCost?: number | undefined; expectedFinishAt?: number | undefined };

/** Placements grouped by machine: how many tasks went there, at what marginal cost, finishing when. */
export function placementEntries(placements: readonly Placed[], base: { at: number; jobId: string | null; userId: string | null }, reasons: Reason[] = []): DecisionEntry[] {
  const byMachine = new Map<string, Placed[]>();
  for (const p of placements) {
    const list = byMachine.get(p.machineId);
    if (list) list.push(p);
    else byMachine.set(p.machineId, [p]);
  }
  return [...byMachine].map(([machineId, list]) => {
    const costs = list.filter((p) => typeof p.marginalCost === "number");
    const finishes = list.filter((p) => typeof p.expectedFinishAt === "number");
    return {
      ...base,
      outcome: "placement" as const,
      machineId,
      tasks: list.length,
      reasons,
      detail: {
        marginalCost: costs.length ? costs.reduce((s, p) => s + p.marginalCost!, 0) : null,
        // Already milliseconds since the epoch: the engine's adapter converts its seconds (PlacementRecord).
        expectedFinishAt: finishes.length ? Math.max(...finishes.map((p) => p.expectedFinishAt!)) : null,
      },
    };
  });
}
