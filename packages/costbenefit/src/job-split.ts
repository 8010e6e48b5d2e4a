// A job larger than one Market Manager's machines, split by task ranges across managers (the Java
// Market paper, section 4.4: several schedulers, each over a subset of the producers). Each part is
// a job of its own, admitted and settled by its manager; the consumer is charged the sum.
import type { BenefitCurve } from "./benefit.ts";

/** A manager's room for a job: how much of it it can run at once (free slots, each at its speed). */
export interface Room {
  manager: string;
  room: number;
}

/** One part of a split job: the tasks [fromTask, fromTask + tasks) of the whole, and who runs them. */
export interface SplitPart {
  manager: string;
  fromTask: number;
  tasks: number;
}

/** Most parts a job is split into: each part is a quote and a submission to its manager. */
export const MAX_SPLIT_PARTS = 16;

/**
 * The job's tasks in contiguous ranges, in the order the rooms are given, each manager's share in
 * proportion to its room (largest remainders, ties to the earlier manager), so every part takes
 * about as long as the others. Managers without room, or whose share rounds to no task, get no
 * part; the largest rooms are kept when there are more than MAX_SPLIT_PARTS. Empty when fewer than
 * two parts would result: a job one manager holds is not split.
 */
export function splitByRoom(taskCount: number, rooms: readonly Room[]): SplitPart[] {
  const withRoom = rooms.filter((r) => Number.isFinite(r.room) && r.room > 0);
  const kept = new Set([...withRoom].sort((a, b) => b.room - a.room).slice(0, MAX_SPLIT_PARTS));
  const used = withRoom.filter((r) => kept.has(r));
  const total = used.reduce((s, r) => s + r.room, 0);
  if (used.length < 2 || taskCount < 2 || total <= 0) return [];
  const exact = used.map((r) => (taskCount * r.room) / total);
  const counts = exact.map(Math.floor);
  let left = taskCount - counts.reduce((s, c) => s + c, 0);
  const byRemainder = exact.map((x, i) => ({ i, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    counts[i]! += 1;
    left--;
  }
  const parts: SplitPart[] = [];
  let from = 0;
  used.forEach((r, i) => {
    const tasks = counts[i]!;
    if (tasks > 0) parts.push({ manager: r.manager, fromTask: from, tasks });
    from += tasks;
  });
  return parts.length < 2 ? [] : parts;
}

/**
 * A part's benefit curve: the whole job's curve with every value scaled by the part's share of the
 * tasks, the times unchanged (each part is worth its share, by the same deadline), so the parts'
 * benefits add up to the whole's.
 */
export function partBenefit(curve: BenefitCurve, tasks: number, taskCount: number): BenefitCurve {
  const share = tasks / taskCount;
  const scale = (v: number) => v * share;
  switch (curve.kind) {
    case "constant":
      return { ...curve, value: scale(curve.value) };
    case "deadline":
      return { ...curve, value: scale(curve.value), ...(curve.penalty === undefined ? {} : { penalty: scale(curve.penalty) }) };
    case "linear-decay":
      return { ...curve, value: scale(curve.value), floor: scale(curve.floor) };
    case "piecewise":
      return { ...curve, points: curve.points.map((p) => ({ t: p.t, value: scale(p.value) })) };
  }
}

/**
 * Whether `parts` split a job of `taskCount` tasks: contiguous from task 0 to the last, each part
 * non-empty, at least two and at most MAX_SPLIT_PARTS. The reason when not.
 */
export function checkSplit(taskCount: number, parts: readonly SplitPart[]): string | null {
  if (parts.length < 2 || parts.length > MAX_SPLIT_PARTS) return `A split job has 2 to ${MAX_SPLIT_PARTS} parts.`;
  let next = 0;
  for (const p of parts) {
    if (p.fromTask !== next || p.tasks < 1) return "A split job's parts cover its tasks in order, each from where the one before ended.";
    next += p.tasks;
  }
  return next === taskCount ? null : `A split job's parts cover its ${taskCount} tasks, not ${next}.`;
}
