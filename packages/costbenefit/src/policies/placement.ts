// Placement rules: how a policy picks one machine for one task. All share the feasibility stage
// and report the same marginal cost, so the policies differ only in the selection they make.
import type { Rng } from "../rng.ts";
import type { SearchContext } from "../pipeline/context.ts";
import { infeasibility, type Estimate, type TaskShape } from "../pipeline/feasibility.ts";
import type { Chooser } from "../pipeline/plan.ts";
import { machineCredits } from "../pipeline/scoring.ts";
import { cheapestMachine } from "../pipeline/selection.ts";
import type { Exclusions } from "../reasons.ts";
import type { PolicyProfile } from "./profile.ts";

/**
 * How a scan rates one machine the task can run on: lower is better; null passes the machine
 * over (the caller has counted why in `why`).
 */
export type Score = (ctx: SearchContext, row: number, task: TaskShape, est: Estimate, why: Exclusions) => number | null;

/**
 * Scan every machine and keep the lowest score, ties to the earlier finish: fine for baselines and
 * the share policies, O(machines) per task. `precheck` can rule a machine out before feasibility.
 */
export function scanChooser(score: Score, precheck?: (ctx: SearchContext, row: number, task: TaskShape, why: Exclusions) => boolean): Chooser {
  return (ctx, task, deadlineAt, excluded, why) => {
    const m = ctx.state.machines;
    const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
    let best = -1;
    let bestScore = Infinity;
    let bestFinish = 0;
    let bestStarts = false;
    let bestBacklog = 0;
    for (let s = 0; s < m.end; s++) {
      if (!m.live(s)) continue;
      why.inspected++;
      if (precheck && !precheck(ctx, s, task, why)) continue;
      const no = infeasibility(ctx, s, task, deadlineAt, excluded, est);
      if (no) {
        why[no]++;
        continue;
      }
      const sc = score(ctx, s, task, est, why);
      if (sc === null) continue;
      if (sc < bestScore || (sc === bestScore && best >= 0 && est.finishAt < bestFinish)) {
        bestScore = sc;
        best = s;
        bestFinish = est.finishAt;
        bestStarts = est.startsNow;
        bestBacklog = est.backlogSeconds;
      }
    }
    if (best < 0) return undefined;
    return { row: best, cost: machineCredits(ctx, best, task, bestBacklog), finishAt: bestFinish, startsNow: bestStarts };
  };
}

/** FCFS: the earliest expected finish. */
const earliestFinish: Score = (_ctx, _s, _t, est) => est.finishAt;
/**
 * Mosix: the lowest load, counted as Mosix does (tasks per unit of capacity, not their unknown
 * lengths), among machines where the task's memory fits if there are any (memory ushering);
 * ties go to the faster finish.
 */
const leastLoaded: Score = (ctx, s, t, est) => {
  const m = ctx.state.machines;
  const f = m.f;
  const used = f.runningMemory[s]! + (ctx.overlay.memoryOf(s));
  const fits = used + t.memoryMb <= f.memoryPerSlot[s]! * f.slots[s]!;
  const load = (m.i.running[s]! + m.i.queued[s]! + (ctx.overlay.countOf(s)) + 1) / f.capacity[s]!;
  return (fits ? 0 : 1e12) + load * 1e6 + est.finishAt * 1e-6;
};

/** PVM: the next machine in turn after the last placement, skipping those that cannot take it. */
const roundRobin: Chooser = (ctx, task, deadlineAt, excluded, why) => {
  const m = ctx.state.machines;
  const end = m.end;
  const tentative = ctx.overlay.total;
  const start = (ctx.state.placementsCommitted + tentative) % Math.max(1, end);
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  for (let k = 0; k < end; k++) {
    const s = (start + k) % end;
    if (!m.live(s)) continue;
    why.inspected++;
    const no = infeasibility(ctx, s, task, deadlineAt, excluded, est);
    if (no) {
      why[no]++;
      continue;
    }
    return { row: s, cost: machineCredits(ctx, s, task, est.backlogSeconds), finishAt: est.finishAt, startsNow: est.startsNow };
  }
  return undefined;
};

function randomChooser(rng: Rng): Chooser {
  return (ctx, task, deadlineAt, excluded, why: Exclusions) => {
    const m = ctx.state.machines;
    const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
    // A random start, then the next feasible machine: uniform when all machines are feasible.
    const end = m.end;
    const start = rng.int(Math.max(1, end));
    for (let k = 0; k < end; k++) {
      const s = (start + k) % end;
      if (!m.live(s)) continue;
      why.inspected++;
      const no = infeasibility(ctx, s, task, deadlineAt, excluded, est);
      if (no) {
        why[no]++;
        continue;
      }
      return { row: s, cost: machineCredits(ctx, s, task, est.backlogSeconds), finishAt: est.finishAt, startsNow: est.startsNow };
    }
    return undefined;
  };
}

export function chooserFor(rule: PolicyProfile["placement"], rng: Rng): Chooser {
  switch (rule) {
    case "marginal-cost":
      return cheapestMachine;
    case "round-robin":
      return roundRobin;
    case "least-loaded":
      return scanChooser(leastLoaded);
    case "earliest-finish":
      return scanChooser(earliestFinish);
    case "random":
      return randomChooser(rng);
    default:
      // free-slot, lowest-price, best-response, best-fit: the share policies choose in their own files.
      throw new Error(`placement ${rule} is chosen by its share policy`);
  }
}
