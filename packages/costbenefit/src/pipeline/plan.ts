// A whole job's placement for one candidate completion time: tasks in decreasing work, each to
// the cheapest machine where it finishes by then, loads updated tentatively (DESIGN.md step 1).
import type { Job } from "../job.ts";
import type { Placement } from "../decision.ts";
import type { Reason } from "../reasons.ts";
import type { SearchContext } from "./context.ts";
import type { TaskShape } from "./feasibility.ts";
import { linkHasRoom, networkCredits } from "./scoring.ts";
import { cheapestMachine, emptyExclusions } from "./selection.ts";

export interface Plan {
  placements: Placement[];
  cost: number;
  completionAt: number;
}

export type PlanResult = { ok: true; plan: Plan } | { ok: false; reason: Reason };

/** The job's tasks with replicas expanded: replica r >= 1 of task t is `${t}~${r}`. */
export function expandTasks(job: Job): TaskShape[][] {
  const groups = job.tasks.map((t) =>
    Array.from({ length: job.replicas }, (_, r) => ({ id: r === 0 ? t.id : `${t.id}~${r}`, work: t.work, memoryMb: t.memoryMb, bytes: t.bytes })),
  );
  // Largest first: the hardest tasks get the most choice (DESIGN.md step 1).
  return groups.sort((a, b) => b[0]!.work - a[0]!.work || (a[0]!.id < b[0]!.id ? -1 : 1));
}

export type Chooser = (ctx: SearchContext, task: TaskShape, deadlineAt: number, excluded: ReadonlySet<number> | undefined, why: ReturnType<typeof emptyExclusions>) =>
  | { row: number; cost: number; finishAt: number; startsNow: boolean }
  | undefined;

export function buildPlan(ctx: SearchContext, groups: TaskShape[][], deadlineAt: number, choose: Chooser = cheapestMachine): PlanResult {
  ctx.overlay.clear();
  const placements: Placement[] = [];
  let cost = 0;
  let completionAt = ctx.now;
  const ids = ctx.state.machines.ids;
  for (const group of groups) {
    const used = group.length > 1 ? new Set<number>() : undefined;
    for (const task of group) {
      const linkOk = linkHasRoom(ctx, task);
      const why = emptyExclusions();
      const c = ctx.bounded && !linkOk ? undefined : choose(ctx, task, deadlineAt, used, why);
      if (!c) {
        return {
          ok: false,
          reason: { code: "no-feasible-machine", taskId: task.id, deadlineAt: Number.isFinite(deadlineAt) ? deadlineAt : null, exclusions: why, linkFull: !linkOk },
        };
      }
      const total = c.cost + networkCredits(ctx, task);
      ctx.overlay.add(c.row, task.work, task.memoryMb, task.bytes);
      // Replicas verify each other only if different owners ran them (DESIGN.md "Verification").
      if (used) for (const s of ctx.state.machines.sameOwner(c.row)) used.add(s);
      placements.push({ taskId: task.id, machineId: ids[c.row]!, expectedFinishAt: c.finishAt, marginalCost: total });
      cost += total;
      completionAt = Math.max(completionAt, c.finishAt);
    }
  }
  ctx.overlay.clear();
  return { ok: true, plan: { placements, cost, completionAt } };
}
