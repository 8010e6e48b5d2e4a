// No admission control (E-PVM, PVM, Mosix, random, FCFS; the Java Market paper section 6): every job is
// placed somewhere, the system-friendly ones within usage bounds while they can.
import type { Decision } from "../decision.ts";
import type { Job } from "../job.ts";
import type { MarketState } from "../state/market-state.ts";
import { createContext } from "../pipeline/context.ts";
import { buildPlan, expandTasks, type Chooser } from "../pipeline/plan.ts";
import type { PolicyProfile } from "./profile.ts";
import { admitted, delayOrReject, maxWaitExceeded } from "./outcomes.ts";

/** No admission control (E-PVM, PVM, Mosix, random, FCFS): every job is placed somewhere. */
export function admitAll(state: MarketState, job: Job, now: number, choose: Chooser, profile: PolicyProfile, policy: string): Decision {
  if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
  const ctx = createContext(state, now, profile.minReputation);
  const groups = expandTasks(job);
  // The system-friendly strategy keeps usage within its maximum while it can (the competitive
  // online assignment behind the Java Market paper, 4.3) and only then overflows; baselines never look.
  let r = profile.placement === "marginal-cost" ? buildPlan(ctx, groups, Infinity, choose) : undefined;
  if (r && !r.ok && profile.holdBeyondBounds && !maxWaitExceeded(state, job.arrivedAt, now)) {
    return { outcome: "delayed", jobId: job.id, reasons: [r.reason] };
  }
  if (!r?.ok) {
    ctx.bounded = false;
    r = buildPlan(ctx, groups, Infinity, choose);
  }
  // Only memory, reputation or replicas can block an unbounded plan: wait for a bigger machine.
  if (!r.ok) return delayOrReject(state, job, now, r.reason);
  return admitted(state, job, r.plan, now, [{ code: "no-admission-control", policy, marginalCost: r.plan.cost }]);
}
