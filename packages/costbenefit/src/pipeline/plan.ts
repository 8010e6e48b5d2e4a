// A whole job's placement for one candidate completion time: tasks in decreasing work, each to
// the cheapest machine where it finishes by then, loads updated tentatively (docs/DESIGN.md step 1).
import type { Job } from "../job.ts";
import type { Placement } from "../decision.ts";
import type { Reason } from "../reasons.ts";
import type { SearchContext } from "./context.ts";
import type { TaskShape } from "./feasibility.ts";
import { linkHasRoom, networkCredits } from "./scoring.ts";
import { SAME_TASKS_AT_LEAST, SameTaskSearch } from "./same-tasks.ts";
import { cheapestMachine, clearExclusions, emptyExclusions } from "./selection.ts";

export interface Plan {
  readonly placements: Placement[];
  cost: number;
  completionAt: number;
}

/**
 * A plan whose placements are written out only when read: a menu builds several plans of a job
 * and a delayed job's plans are never read at all, so a 10,000-task job's placements are made
 * once, for the plan admitted, instead of once per plan tried.
 */
class BuiltPlan implements Plan {
  private written: Placement[] | undefined;
  constructor(
    readonly cost: number,
    readonly completionAt: number,
    private readonly taskIds: string[],
    private readonly machineIds: string[],
    private readonly finishAt: Float64Array,
    private readonly costs: Float64Array,
  ) {}

  get placements(): Placement[] {
    if (!this.written) {
      const out: Placement[] = new Array(this.taskIds.length);
      for (let i = 0; i < out.length; i++) out[i] = { taskId: this.taskIds[i]!, machineId: this.machineIds[i]!, expectedFinishAt: this.finishAt[i]!, marginalCost: this.costs[i]! };
      this.written = out;
    }
    return this.written;
  }
}

export type PlanResult = { ok: true; plan: Plan } | { ok: false; reason: Reason };

/**
 * The job's tasks with replicas expanded: replica r >= 1 of task t is `${t}~${r}`. Without
 * replicas each task is its own group, read as it is (no copy): a job of 10,000 tasks is asked
 * again at every change of capacity while it waits, and copies of its tasks were most of the
 * garbage that made each asking stall the market.
 */
export function expandTasks(job: Job): TaskShape[][] {
  const k = job.replicas;
  return Array.from(sortedOrder(job), (i): TaskShape[] => {
    const t = job.tasks[i]!;
    return k === 1 ? [t] : Array.from({ length: k }, (_, r) => ({ id: r === 0 ? t.id : `${t.id}~${r}`, work: t.work, memoryMb: t.memoryMb, bytes: t.bytes }));
  });
}

/** Positions of the job's tasks, largest first, then by id: the hardest tasks get the most choice (docs/DESIGN.md step 1). */
function sortedOrder(job: Job): number[] {
  const tasks = job.tasks;
  const known = sorted.get(job.id);
  const reused = known && (sameTasks(known, tasks) ? known.order : reorder(known, tasks));
  if (reused) return reused;
  const order = Array.from({ length: tasks.length }, (_, i) => i);
  order.sort((a, b) => tasks[b]!.work - tasks[a]!.work || (tasks[a]!.id < tasks[b]!.id ? -1 : 1));
  if (tasks.length >= SORTED_AT_LEAST) {
    if (sorted.size >= SORTED_KEPT) sorted.delete(sorted.keys().next().value!);
    const rank = new Map<string, number>();
    for (let r = 0; r < order.length; r++) rank.set(tasks[order[r]!]!.id, r);
    sorted.set(job.id, { ids: tasks.map((t) => t.id), work: Float64Array.from(tasks, (t) => t.work), order, rank });
  }
  return order;
}

/**
 * The order of the last few big jobs asked about: sorting 10,000 task ids was most of what asking
 * a delayed job again cost. Reused when the job has the very same task ids and work figures, in
 * the same order (checked in one pass, far cheaper than the sort) or in any other (each task
 * takes the place its id had, checked against its work; still far cheaper than the sort).
 */
interface SortedTasks {
  ids: string[];
  work: Float64Array;
  order: number[];
  /** Each task id's place in `order`. */
  rank: Map<string, number>;
}
const sorted = new Map<string, SortedTasks>();
const SORTED_AT_LEAST = 1000;
const SORTED_KEPT = 8;

function sameTasks(known: SortedTasks, tasks: readonly { id: string; work: number }[]): boolean {
  if (known.ids.length !== tasks.length) return false;
  for (let i = 0; i < tasks.length; i++) if (known.ids[i] !== tasks[i]!.id || known.work[i] !== tasks[i]!.work) return false;
  return true;
}

/**
 * The known order for the same tasks handed in another order, or undefined when they are not the
 * same tasks: an id unknown or seen twice, or a work figure changed. The sort's order is total
 * on (work, id), so for the same tasks it is the same whatever order they come in.
 */
function reorder(known: SortedTasks, tasks: readonly { id: string; work: number }[]): number[] | undefined {
  if (known.ids.length !== tasks.length) return undefined;
  const order: number[] = new Array(tasks.length).fill(-1);
  for (let i = 0; i < tasks.length; i++) {
    const r = known.rank.get(tasks[i]!.id);
    if (r === undefined || order[r] !== -1 || known.work[known.order[r]!] !== tasks[i]!.work) return undefined;
    order[r] = i;
  }
  return order;
}

/** Tasks one search serves (same-tasks.ts): the same work and memory, and the same bytes unless nothing has a deadline. */
function sameSearch(a: TaskShape, b: TaskShape, deadlineAt: number): boolean {
  return a.work === b.work && a.memoryMb === b.memoryMb && (a.bytes === b.bytes || deadlineAt === Infinity);
}

export type Chooser = (ctx: SearchContext, task: TaskShape, deadlineAt: number, excluded: ReadonlySet<number> | undefined, why: ReturnType<typeof emptyExclusions>) =>
  | { row: number; cost: number; finishAt: number; startsNow: boolean }
  | undefined;

export function buildPlan(ctx: SearchContext, groups: TaskShape[][], deadlineAt: number, choose: Chooser = cheapestMachine): PlanResult {
  return planUpTo(ctx, groups, deadlineAt, choose, Infinity) as PlanResult;
}

/**
 * The plan buildPlan makes, or undefined (whether or not one exists) once its cost passes
 * `maxCost`: costs only add up, so a caller that cannot use a plan dearer than that learns it
 * after the first tasks instead of placing all of them.
 */
export function planWithin(ctx: SearchContext, groups: TaskShape[][], deadlineAt: number, choose: Chooser, maxCost: number): Plan | undefined {
  const r = planUpTo(ctx, groups, deadlineAt, choose, maxCost);
  return r !== OVER_BUDGET && r.ok ? r.plan : undefined;
}

const OVER_BUDGET = Symbol("over budget");

function planUpTo(ctx: SearchContext, groups: TaskShape[][], deadlineAt: number, choose: Chooser, maxCost: number): PlanResult | typeof OVER_BUDGET {
  ctx.overlay.clear();
  let count = 0;
  for (const group of groups) count += group.length;
  const taskIds: string[] = new Array(count);
  const machineIds: string[] = new Array(count);
  const finishAt = new Float64Array(count);
  const costs = new Float64Array(count);
  let i = 0;
  let cost = 0;
  let completionAt = ctx.now;
  const ids = ctx.state.machines.ids;
  // One tally of exclusions, cleared per task: it leaves the plan only in a failure's reason.
  const why = emptyExclusions();
  // A run of tasks of one shape is searched once for all of them (same-tasks.ts).
  let same: SameTaskSearch | undefined;
  let runEnd = 0;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    const used = group.length > 1 ? new Set<number>() : undefined;
    if (g >= runEnd) {
      same = undefined;
      runEnd = g + 1;
      if (choose === cheapestMachine && !used && ctx.state.machineCount > 0) {
        let bytesVary = false;
        while (runEnd < groups.length && groups[runEnd]!.length === 1 && sameSearch(group[0]!, groups[runEnd]![0]!, deadlineAt)) {
          bytesVary ||= groups[runEnd]![0]!.bytes !== group[0]!.bytes;
          runEnd++;
        }
        if (runEnd - g >= SAME_TASKS_AT_LEAST) same = new SameTaskSearch(ctx, group[0]!, deadlineAt, bytesVary);
      }
    }
    for (const task of group) {
      const linkOk = linkHasRoom(ctx, task);
      clearExclusions(why);
      let c: ReturnType<Chooser> = undefined;
      if (!ctx.bounded || linkOk) {
        if (same) {
          c = same.choose(task, why);
          // A cost or bound that is not a finite number, met as the run's search went further: the walk answers from here on.
          if (same.unsafe) same = undefined;
        }
        if (!same) c = choose(ctx, task, deadlineAt, used, why);
      }
      if (!c) {
        return {
          ok: false,
          reason: { code: "no-feasible-machine", taskId: task.id, deadlineAt: Number.isFinite(deadlineAt) ? deadlineAt : null, exclusions: { ...why }, linkFull: !linkOk },
        };
      }
      const total = c.cost + networkCredits(ctx, task);
      ctx.overlay.add(c.row, task.work, task.memoryMb, task.bytes);
      same?.placed(c.row);
      // Replicas verify each other only if different owners ran them (docs/DESIGN.md "Verification").
      if (used) for (const s of ctx.state.machines.sameOwner(c.row)) used.add(s);
      taskIds[i] = task.id;
      machineIds[i] = ids[c.row]!;
      finishAt[i] = c.finishAt;
      costs[i] = total;
      i++;
      cost += total;
      completionAt = Math.max(completionAt, c.finishAt);
      if (cost > maxCost) {
        ctx.overlay.clear();
        return OVER_BUDGET;
      }
    }
  }
  ctx.overlay.clear();
  return { ok: true, plan: new BuiltPlan(cost, completionAt, taskIds, machineIds, finishAt, costs) };
}
