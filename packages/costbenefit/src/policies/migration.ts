// Moving work that is already placed. Three rules, all bounded per tick:
// - rebalance (miserly, DESIGN.md "Rebalancing"): a queued task moves to a machine with an idle
//   slot if that lowers total cost and does not finish later (so the job's benefit cannot drop);
// - cost (E-Mosix, seed 003 section 6): a task moves where its marginal cost is lower than what
//   it costs where it is, by at least minGain;
// - load (Mosix-like): a task moves from the most to the least loaded machine (load = tasks per
//   unit of capacity) when that evens them out, and memory is ushered off over-committed machines.
import type { Move } from "../decision.ts";
import { resourceMarginalCost } from "../cost.ts";
import { createContext, type SearchContext } from "../pipeline/context.ts";
import { infeasibility, type Estimate } from "../pipeline/feasibility.ts";
import { cheapestMachine, emptyExclusions } from "../pipeline/selection.ts";
import type { MarketState, TaskRecord } from "../state/market-state.ts";
import type { PolicyProfile } from "./profile.ts";

type MigrationProfile = PolicyProfile["migration"];

function remainingOf(state: MarketState, t: TaskRecord, now: number): number {
  if (!t.running) return t.work;
  const f = state.machines.f;
  // Time-shared machines give each running task speed / max(1, running / slots).
  const share = f.speed[t.machine]! / Math.max(1, state.machines.i.running[t.machine]! / f.slots[t.machine]!);
  return Math.max(t.work * 0.05, t.work - share * (now - t.startedAt));
}

/** What the task's share of its machine costs now: removing it saves this much (credits). */
function savingOf(ctx: SearchContext, t: TaskRecord, left: number): number {
  const m = ctx.state.machines;
  const f = m.f;
  const s = t.machine;
  const backlog = m.remaining(s, ctx.now) / f.capacity[s]!;
  const d = left / f.capacity[s]!;
  const compute = resourceMarginalCost(ctx.n, Math.max(0, backlog - d), ctx.H, d);
  const mem = t.running && t.memoryMb > 0 ? resourceMarginalCost(ctx.n, Math.max(0, f.runningMemory[s]! - t.memoryMb), f.memoryPerSlot[s]! * f.slots[s]!, t.memoryMb) : 0;
  return ctx.P * (compute + mem) + (f.pricePerSecond[s]! * left) / f.speed[s]!;
}

function candidates(state: MarketState, rule: MigrationProfile, order: (slot: number) => number, limit: number): number[] {
  const m = state.machines;
  const list: number[] = [];
  for (let s = 0; s < m.end; s++) {
    if (!m.live(s)) continue;
    const movable = rule.moveRunning ? m.i.running[s]! + m.i.queued[s]! : m.i.queued[s]!;
    if (movable > 0) list.push(s);
  }
  return list.sort((a, b) => order(b) - order(a) || a - b).slice(0, limit);
}

export function migrationMoves(state: MarketState, now: number, profile: PolicyProfile): Move[] {
  const rule = profile.migration;
  if (rule.rule === "none" || rule.maxMovesPerTick === 0 || state.machineCount < 2) return [];
  const ctx = createContext(state, now, profile.minReputation);
  ctx.bounded = false;
  const m = state.machines;
  const moves: Move[] = [];
  const touched = new Set<number>();
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  const load = (s: number) => (m.i.running[s]! + m.i.queued[s]!) / m.f.capacity[s]!;
  const sources = candidates(state, rule, rule.rule === "load" ? load : (s) => m.remaining(s, now) / m.f.capacity[s]!, 4 * rule.maxMovesPerTick);

  for (const src of sources) {
    if (moves.length >= rule.maxMovesPerTick) break;
    if (touched.has(src)) continue;
    const exclude = new Set<number>([src, ...touched]);
    let bestMove: { t: TaskRecord; to: number; reasons: Move["reasons"]; score: number } | undefined;
    for (let t = state.heads[src]; t; t = t.next) {
      if (t.running && !rule.moveRunning) continue;
      const left = remainingOf(state, t, now);
      const shape = { id: t.id, work: left, memoryMb: t.memoryMb, bytes: 0 };
      if (rule.rule === "load") {
        const memMax = m.f.memoryPerSlot[src]! * m.f.slots[src]!;
        const over = m.f.runningMemory[src]! > memMax;
        // Least loaded other machine that can hold the task.
        let to = -1;
        for (let s = 0; s < m.end; s++) {
          if (!m.live(s) || exclude.has(s) || infeasibility(ctx, s, shape, Infinity, exclude, est)) continue;
          const fits = m.f.runningMemory[s]! + t.memoryMb <= m.f.memoryPerSlot[s]! * m.f.slots[s]!;
          if (over && !fits) continue;
          if (to < 0 || load(s) < load(to)) to = s;
        }
        if (to < 0) continue;
        const before = load(src);
        const after = (m.i.running[to]! + m.i.queued[to]! + 1) / m.f.capacity[to]!;
        const gain = over ? t.memoryMb : left * (before - after);
        if (!over && after >= before * (1 - rule.minGain)) continue;
        const reasons: Move["reasons"] = over
          ? [{ code: "memory-ushering", memoryUsedMb: m.f.runningMemory[src]!, memoryMaxMb: memMax }]
          : [{ code: "load-balance", loadBefore: before, loadAfter: after }];
        if (!bestMove || gain > bestMove.score) bestMove = { t, to, reasons, score: gain };
      } else {
        const saving = savingOf(ctx, t, left);
        const c = cheapestMachine(ctx, shape, Infinity, exclude, emptyExclusions());
        if (!c) continue;
        if (c.cost > saving * (1 - rule.minGain)) continue;
        if (rule.rule === "rebalance") {
          // Only to a free slot, and never finishing later than where the task waits now.
          const finishBefore = m.remaining(src, now) / m.f.capacity[src]! + now + left / m.f.speed[src]!;
          if (!c.startsNow || c.finishAt > finishBefore) continue;
          const reasons: Move["reasons"] = [{ code: "rebalance", costBefore: saving, costAfter: c.cost, finishBefore, finishAfter: c.finishAt }];
          if (!bestMove || saving - c.cost > bestMove.score) bestMove = { t, to: c.slot, reasons, score: saving - c.cost };
        } else {
          const finishBefore = now + m.remaining(src, now) / m.f.capacity[src]!;
          const reasons: Move["reasons"] = [{ code: "rebalance", costBefore: saving, costAfter: c.cost, finishBefore, finishAfter: c.finishAt }];
          if (!bestMove || saving - c.cost > bestMove.score) bestMove = { t, to: c.slot, reasons, score: saving - c.cost };
        }
      }
    }
    if (bestMove) {
      moves.push({ taskId: bestMove.t.id, fromMachineId: m.ids[src]!, toMachineId: m.ids[bestMove.to]!, reasons: bestMove.reasons });
      touched.add(src);
      touched.add(bestMove.to);
    }
  }
  return moves;
}
