// Stage 2: what placing the task on the machine costs, in credits (docs/DESIGN.md "The economics").
import { marginalCostLn } from "../cost.ts";
import type { SearchContext } from "./context.ts";
import type { TaskShape } from "./feasibility.ts";

/** Marginal cost on the market's link: the same on every machine, so computed once per task. */
export function networkCredits(ctx: SearchContext, task: TaskShape): number {
  const used = ctx.state.committedBytes + ctx.overlay.bytes;
  return ctx.P * marginalCostLn(ctx.lnN, used, ctx.linkBytesPerSecond * ctx.H, task.bytes);
}

/** Compute + memory marginal cost times P, plus the expected payment; `backlogSeconds` from feasibility. */
export function machineCredits(ctx: SearchContext, row: number, task: TaskShape, backlogSeconds: number): number {
  const f = ctx.state.machines.f;
  const lnN = ctx.lnN;
  const compute = marginalCostLn(lnN, backlogSeconds, ctx.H, task.work / f.capacity[row]!);
  const memUsed = f.runningMemory[row]! + (ctx.overlay.memoryOf(row));
  const memory = task.memoryMb > 0 ? marginalCostLn(lnN, memUsed, f.memoryPerSlot[row]! * f.slots[row]!, task.memoryMb) : 0;
  const payment = (f.pricePerSecond[row]! * task.work) / f.speed[row]!;
  return ctx.P * (compute + memory) + payment;
}

/** Whether the link can carry the task's bytes within its maximum over the horizon. */
export function linkHasRoom(ctx: SearchContext, task: TaskShape): boolean {
  return ctx.state.committedBytes + ctx.overlay.bytes + task.bytes <= ctx.linkBytesPerSecond * ctx.H;
}
