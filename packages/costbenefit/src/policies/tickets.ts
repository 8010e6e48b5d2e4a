// `tickets`: the Computational Co-op's non-preemptive proportional share (the Computational Co-op paper). Each job
// holds tickets t (its curve's maximum benefit, job-terms.ts) and has used resources r (the speed
// of the slots its running tasks hold). A free slot goes to the job with the least r/t; a job
// that holds nothing yet counts as starting at r = t x min(r/t) over the running jobs, so it ties
// with the least-served job instead of overtaking every job already running, and ties go to the
// older job. Tasks are never preempted; p_max bounds how long one may hold a slot.
//
// How the market approximates it:
// - a job starts only while a slot is free for it: with no free slot, or fewer free slots than
//   the jobs waiting ahead of it, it is delayed, and re-evaluated oldest first as slots free up,
//   at most as many as there are free slots (all waiting jobs sit at min(r/t): the new-job rule);
// - its first tasks take free slots, the rest queue where they would finish earliest; at each
//   tick an idle slot pulls the queued task of the job with the least r/t from another machine
//   (live workers lease their own queue in order, so this is where the r/t rule acts on them);
// - p_max: tasks are killed in the paper once they run past p_max; here the work estimate is
//   known up front, so a task is not placed on a slot where it would run longer than p_max, and
//   a job with a task no slot can run within p_max is rejected at once (no slot time is wasted on
//   a run that would be killed). The sandbox's wall-time limit stays the live backstop.
import type { Move } from "../decision.ts";
import type { Job } from "../job.ts";
import { infeasibility, type Estimate } from "../pipeline/feasibility.ts";
import type { Chooser } from "../pipeline/plan.ts";
import { scanChooser } from "./placement.ts";
import type { TaskRecord } from "../state/market-state.ts";
import type { JobTerms } from "./job-terms.ts";
import type { PolicyProfile } from "./profile.ts";
import { admitted } from "./outcomes.ts";
import { buildSharePolicy, freeSlots, planJob, unboundedContext, waitOrReject, type ShareCall } from "./share.ts";
import type { Policy } from "./types.ts";

const TINY = 1e-9;

/** r/t of every job with running tasks, and their minimum (0 when nothing runs). */
export function usagePerTicket(call: ShareCall): { level: (jobId: string) => number; min: number } {
  let min = Infinity;
  const levels = new Map<string, number>();
  for (const [id, l] of call.loads) {
    if (l.held <= 0) continue;
    const v = l.held / Math.max(TINY, call.termsOf(id).value);
    levels.set(id, v);
    min = Math.min(min, v);
  }
  const floor = Number.isFinite(min) ? min : 0;
  // The new-job rule: a job holding nothing stands at t x min(r/t), i.e. r/t = min.
  return { level: (id) => levels.get(id) ?? floor, min: floor };
}

/** A free slot first, then the earliest finish; never a slot where the task outlasts p_max. */
function freeSlotChooser(call: ShareCall): Chooser {
  const pMax = call.profile.terms.pMaxSeconds;
  return scanChooser(
    (_ctx, _s, _task, est) => (est.startsNow ? 0 : 1e15) + est.finishAt,
    (ctx, s, task, why) => {
      if (task.work / ctx.state.machines.f.speed[s]! <= pMax) return true;
      why.deadline++;
      return false;
    },
  );
}

function decide(call: ShareCall, job: Job, terms: JobTerms) {
  const { state, profile } = call;
  const pMax = profile.terms.pMaxSeconds;
  const fastest = state.aggregates().maxSpeed;
  for (const t of job.tasks) {
    if (t.work / fastest > pMax) return waitOrReject(call, job, { code: "over-p-max", taskId: t.id, runSeconds: t.work / fastest, pMaxSeconds: pMax }, true);
  }
  const { total } = freeSlots(state);
  // Jobs delayed before this one stand at the same r/t (the new-job rule): the older go first.
  let ahead = 0;
  for (const d of state.delayed.values()) {
    if (d.job.id === job.id) continue;
    if (d.job.arrivedAt < job.arrivedAt || (d.job.arrivedAt === job.arrivedAt && d.job.id < job.id)) ahead++;
  }
  if (total <= ahead) return waitOrReject(call, job, { code: "waiting-for-slot", freeSlots: total, jobsAhead: ahead });
  const r = planJob(call, job, freeSlotChooser(call));
  if (!r.ok) return waitOrReject(call, job, r.reason);
  const { min } = usagePerTicket(call);
  return admitted(call.state, job, r.plan, call.now, [{ code: "tickets", tickets: terms.value, usagePerTicket: min, freeSlots: total }]);
}

/** Idle slots pull the queued task of the job with the least r/t from other machines. */
function moves(call: ShareCall): Move[] {
  const { state, profile } = call;
  const limit = profile.migration.maxMovesPerTick;
  const m = state.machines;
  const { free, total } = freeSlots(state);
  if (total === 0 || limit === 0) return [];
  const queued: TaskRecord[] = [];
  for (const t of state.tasks.values()) if (!t.running) queued.push(t);
  if (queued.length === 0) return [];
  const { level } = usagePerTicket(call);
  // Tentative r of each job as its tasks are handed slots in this tick.
  const extra = new Map<string, number>();
  const levelNow = (jobId: string) => level(jobId) + (extra.get(jobId) ?? 0) / Math.max(TINY, call.termsOf(jobId).value);
  const ctx = unboundedContext(call);
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  const taken = new Set<string>();
  const out: Move[] = [];
  for (let s = 0; s < m.end && out.length < limit; s++) {
    for (let k = 0; k < free[s]! && out.length < limit; k++) {
      let pick: TaskRecord | undefined;
      let pickLevel = Infinity;
      for (const t of queued) {
        // A task queued where a slot is free starts there anyway.
        if (taken.has(t.id) || t.machine === s || free[t.machine]! > 0) continue;
        if (t.work / m.f.speed[s]! > profile.terms.pMaxSeconds) continue;
        if (infeasibility(ctx, s, t, Infinity, undefined, est)) continue;
        const v = levelNow(t.jobId);
        if (v < pickLevel || (v === pickLevel && pick && t.id < pick.id)) {
          pick = t;
          pickLevel = v;
        }
      }
      if (!pick) break;
      taken.add(pick.id);
      extra.set(pick.jobId, (extra.get(pick.jobId) ?? 0) + m.f.speed[s]!);
      out.push({
        taskId: pick.id, fromMachineId: m.ids[pick.machine]!, toMachineId: m.ids[s]!,
        reasons: [{ code: "least-usage-per-ticket", jobId: pick.jobId, usagePerTicket: pickLevel, tickets: call.termsOf(pick.jobId).value }],
      });
    }
  }
  return out;
}

export function buildTicketsPolicy(name: string, profile: PolicyProfile): Policy {
  return buildSharePolicy(name, profile, {
    decide,
    chooser: (call) => freeSlotChooser(call),
    // As many waiting jobs as there are free slots, oldest first (all stand at min r/t).
    order: (call, candidates) => candidates.slice(0, freeSlots(call.state).total),
    moves,
  });
}
