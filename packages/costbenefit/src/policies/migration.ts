// Moving work that is already placed. Three rules, all bounded per tick:
// - rebalance (miserly, docs/DESIGN.md "Rebalancing"): a queued task moves to a machine with an idle
//   slot if that lowers total cost and does not finish later (so the job's benefit cannot drop);
// - cost (E-Mosix, the Java Market paper section 6): a task moves where its marginal cost is lower than what
//   it costs where it is, by at least minGain;
// - load (Mosix-like): a task moves from the most to the least loaded machine (load = tasks per
//   unit of capacity) when that evens them out, and memory is ushered off over-committed machines.
import type { Move } from "../decision.ts";
import { marginalCostLn } from "../cost.ts";
import { createContext, type SearchContext } from "../pipeline/context.ts";
import { infeasibility, type Estimate } from "../pipeline/feasibility.ts";
import { cheapestMachine, emptyExclusions } from "../pipeline/selection.ts";
import type { MarketState, TaskRecord } from "../state/market-state.ts";
import type { PolicyProfile } from "./profile.ts";

type MigrationProfile = PolicyProfile["migration"];

/** What the task's share of its machine costs now: removing it saves this much (credits). */
function savingOf(ctx: SearchContext, t: TaskRecord, left: number): number {
  const m = ctx.state.machines;
  const f = m.f;
  const s = t.machine;
  const backlog = m.remaining(s, ctx.now) / f.capacity[s]!;
  const d = left / f.capacity[s]!;
  const compute = marginalCostLn(ctx.lnN, Math.max(0, backlog - d), ctx.H, d);
  // Memory is priced where the task will run: a queued task will need it at the source just as
  // the target's quote charges it there, so both sides of the comparison count it.
  const others = t.running ? Math.max(0, f.runningMemory[s]! - t.memoryMb) : f.runningMemory[s]!;
  const mem = t.memoryMb > 0 ? marginalCostLn(ctx.lnN, others, f.memoryPerSlot[s]! * f.slots[s]!, t.memoryMb) : 0;
  return ctx.P * (compute + mem) + (f.pricePerSecond[s]! * left) / f.speed[s]!;
}

function candidates(state: MarketState, rule: MigrationProfile, order: (row: number) => number, limit: number): number[] {
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
  const load = (s: number) => loadOf(state, s);
  const sources = candidates(state, rule, rule.rule === "load" ? load : (s) => m.remaining(s, now) / m.f.capacity[s]!, 4 * rule.maxMovesPerTick);

  for (const src of sources) {
    if (moves.length >= rule.maxMovesPerTick) break;
    if (touched.has(src)) continue;
    const exclude = new Set<number>([src, ...touched]);
    let bestMove: Candidate | undefined;
    if (rule.rule === "load") {
      bestMove = loadMove(ctx, src, exclude, rule, est);
    } else {
      // Tasks of one shape on one source (a job's tasks are mostly alike) get the same answer from
      // the search, and an equal score never replaces the best: each shape is searched once.
      const searched = new Set<string>();
      for (const t of state.tasksOn(src)) {
        if (t.running && !rule.moveRunning) continue;
        const left = state.remainingOf(t, now);
        const shape = `${left}/${t.memoryMb}/${t.running ? 1 : 0}`;
        if (searched.has(shape)) continue;
        searched.add(shape);
        // The same quantity of work leaves the source and joins the target: the task's share of
        // the backlog the source reports, so both sides of the comparison use one unit.
        const q = Math.min(left, m.remaining(src, now) / Math.max(1, m.i.running[src]! + m.i.queued[src]!));
        if (q <= 0) continue;
        const saving = savingOf(ctx, t, q);
        const moved = { id: t.id, work: q, memoryMb: t.memoryMb, bytes: 0 };
        ctx.bounded = true;
        // A running task only moves where usage stays within its maximum: the move is optional,
        // and pushing a machine past its memory would make it thrash.
        const c = cheapestMachine(ctx, moved, Infinity, exclude, emptyExclusions()) ?? (t.running ? undefined : ((ctx.bounded = false), cheapestMachine(ctx, moved, Infinity, exclude, emptyExclusions())));
        ctx.bounded = false;
        if (!c) continue;
        if (c.cost > saving * (1 - rule.minGain)) continue;
        // Where it is, it starts at the latest when the backlog ahead drains, then runs alone.
        const finishBefore = now + m.remaining(src, now) / m.f.capacity[src]! + left / m.f.speed[src]!;
        // rebalance: only to a free slot, and never finishing later than where the task waits.
        if (rule.rule === "rebalance" && (!c.startsNow || c.finishAt > finishBefore)) continue;
        const reasons: Move["reasons"] = [{ code: "rebalance", costBefore: saving, costAfter: c.cost, finishBefore, finishAfter: c.finishAt }];
        // The saving holds for as long as the task would have stayed: weigh it by its remaining work.
        const score = (saving - c.cost) * left;
        if (!bestMove || score > bestMove.score) bestMove = { t, to: c.row, reasons, score };
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

interface Candidate {
  t: TaskRecord;
  to: number;
  reasons: Move["reasons"];
  score: number;
}

function loadOf(state: MarketState, s: number): number {
  const m = state.machines;
  return (m.i.running[s]! + m.i.queued[s]!) / m.f.capacity[s]!;
}

/**
 * Mosix-like: if the source is over its memory, usher its largest-memory task to the least loaded
 * machine where it fits; otherwise move its longest task to the least loaded machine when that
 * evens the loads out by more than minGain.
 */
function loadMove(ctx: SearchContext, src: number, exclude: Set<number>, rule: MigrationProfile, est: Estimate): Candidate | undefined {
  const state = ctx.state;
  const m = state.machines;
  const memMax = m.f.memoryPerSlot[src]! * m.f.slots[src]!;
  const over = rule.usher && m.f.runningMemory[src]! > memMax;
  let pick: TaskRecord | undefined;
  let pickKey = -Infinity;
  for (const t of state.tasksOn(src)) {
    if (t.running && !rule.moveRunning) continue;
    const key = over ? t.memoryMb : state.remainingOf(t, ctx.now);
    if (key > pickKey) {
      pick = t;
      pickKey = key;
    }
  }
  if (!pick) return undefined;
  const shape = { id: pick.id, work: state.remainingOf(pick, ctx.now), memoryMb: pick.memoryMb, bytes: 0 };
  let to = -1;
  for (let s = 0; s < m.end; s++) {
    if (!m.live(s) || exclude.has(s) || infeasibility(ctx, s, shape, Infinity, exclude, est)) continue;
    const fits = m.f.runningMemory[s]! + pick.memoryMb <= m.f.memoryPerSlot[s]! * m.f.slots[s]!;
    // Mosix never sends a process where it would not fit in free memory: balancing load
    // into paging would slow the target far more than it relieves the source.
    if (!fits) continue;
    if (to < 0 || loadOf(state, s) < loadOf(state, to)) to = s;
  }
  if (to < 0) return undefined;
  const before = loadOf(state, src);
  const after = (m.i.running[to]! + m.i.queued[to]! + 1) / m.f.capacity[to]!;
  if (over) return { t: pick, to, reasons: [{ code: "memory-ushering", memoryUsedMb: m.f.runningMemory[src]!, memoryMaxMb: memMax }], score: pick.memoryMb };
  if (after >= before * (1 - rule.minGain)) return undefined;
  return { t: pick, to, reasons: [{ code: "load-balance", loadBefore: before, loadAfter: after }], score: shape.work };
}
