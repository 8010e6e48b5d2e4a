// Stage 1: can this task run on this machine, and by when would it finish? (docs/DESIGN.md step 1)
import type { SearchContext } from "./context.ts";
import type { Exclusions } from "../reasons.ts";

export interface TaskShape {
  id: string;
  work: number;
  memoryMb: number;
  bytes: number;
}

export const OK = 0;
export type Exclusion = Exclude<keyof Exclusions, "inspected">;

export interface Estimate {
  finishAt: number;
  /** Backlog seconds on the machine before this task (including tentative placements). */
  backlogSeconds: number;
  startsNow: boolean;
}

/**
 * Estimated finish: a task starts at once if a slot is free, otherwise when the average slot
 * drains (FIFO list scheduling starts it no later than that), then runs at the slot's speed and
 * moves its bytes at the machine's bandwidth.
 */
export function estimate(ctx: SearchContext, row: number, task: TaskShape, out: Estimate): Estimate {
  const m = ctx.state.machines;
  const f = m.f;
  const o = ctx.overlay;
  const extraWork = o.workOf(row);
  const extraCount = o.countOf(row);
  const backlog = (m.remaining(row, ctx.now) + extraWork) / f.capacity[row]!;
  const busy = m.i.running[row]! + m.i.queued[row]! + extraCount;
  out.startsNow = busy < f.slots[row]!;
  out.backlogSeconds = backlog;
  out.finishAt = finishOf(ctx, row, task, out.startsNow, backlog);
  return out;
}

/** When the task finishes on the machine, starting at once or once the backlog drained. */
export function finishOf(ctx: SearchContext, row: number, task: TaskShape, startsNow: boolean, backlogSeconds: number): number {
  const f = ctx.state.machines.f;
  const start = startsNow ? ctx.now : ctx.now + backlogSeconds;
  return start + task.work / f.speed[row]! + task.bytes / f.bandwidth[row]!;
}

/** Returns undefined when feasible, else the check that ruled the machine out. */
export function infeasibility(
  ctx: SearchContext,
  row: number,
  task: TaskShape,
  deadlineAt: number,
  excluded: ReadonlySet<number> | undefined,
  est: Estimate,
): Exclusion | undefined {
  const f = ctx.state.machines.f;
  // The producer switched this capacity off: nothing new is planned on it (it keeps what it runs).
  if (f.available[row] === 0) return "unavailable";
  // A task that needs more than one slot's memory cannot go to the machine at all (docs/DESIGN.md).
  if (task.memoryMb > f.memoryPerSlot[row]!) return "memory";
  if (f.reputation[row]! < ctx.minReputation) return "reputation";
  // Replicas of one task go to different machines so their outputs can outvote a liar.
  if (excluded?.has(row)) return "replica";
  estimate(ctx, row, task, est);
  if (est.finishAt > f.departureAt[row]!) return "departure";
  if (est.finishAt > deadlineAt) return "deadline";
  // the Java Market paper, 4.3: usage stays within its maximum; compute's maximum is the horizon H. A task's
  // own share counts at most H/2, so a task longer than the horizon still fits a machine that
  // is at most half committed instead of never fitting anywhere.
  if (ctx.bounded && est.backlogSeconds + Math.min(task.work / f.capacity[row]!, ctx.H / 2) > ctx.H) return "horizon";
  // Memory within its maximum too, counting the task as if it ran now (conservative for a task
  // that will wait for a slot; exact on a time-shared machine where everything runs at once).
  if (ctx.bounded && task.memoryMb > 0) {
    const used = f.runningMemory[row]! + (ctx.overlay.memoryOf(row));
    if (used + task.memoryMb > f.memoryPerSlot[row]! * f.slots[row]!) return "memoryFull";
  }
  return undefined;
}
