// Applying a decision to the state: the only way a policy's answer changes the market.
import type { Decision, Replacement } from "./decision.ts";
import type { Job, PendingTask } from "./job.ts";
import type { MarketState, StateSeen } from "./state/market-state.ts";

/**
 * Admitted: tasks join their machines' queues. Delayed: kept for re-evaluation, as of `seen`, the
 * state the decision looked at (state.seen() when it was taken; default now). Rejected: dropped.
 */
export function commitDecision(state: MarketState, job: Job, decision: Decision, now: number, seen?: StateSeen): void {
  if (decision.jobId !== job.id) throw new Error(`decision for ${decision.jobId} applied to job ${job.id}`);
  if (decision.outcome === "admitted") {
    const byId = new Map(job.tasks.map((t) => [t.id, t]));
    for (const p of decision.placements) {
      // Replica r >= 1 of task t is `${t}~${r}` (see expandTasks).
      const base = byId.get(p.taskId) ?? byId.get(p.taskId.slice(0, p.taskId.lastIndexOf("~")));
      if (!base) throw new Error(`placement for unknown task ${p.taskId}`);
      state.assignTask({ ...base, id: p.taskId, jobId: job.id }, p.machineId, now);
    }
    state.forgetDelayedJob(job.id);
  } else if (decision.outcome === "delayed") {
    state.delayJob(job, now, decision.reasons, seen);
  } else {
    state.forgetDelayedJob(job.id);
  }
}

/** Apply a re-placement of tasks that came back from a departed machine. */
export function commitReplacement(state: MarketState, tasks: readonly PendingTask[], replacement: Replacement, now: number): void {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  for (const p of replacement.placements) {
    const t = byId.get(p.taskId);
    if (!t) throw new Error(`placement for unknown task ${p.taskId}`);
    state.assignTask(t, p.machineId, now);
  }
}
