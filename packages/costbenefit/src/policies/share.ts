// What the four share policies (tickets, opportunity-cost, continuous-bid, reservation) have in
// common: the Policy interface around a per-policy decision, chooser and moves; the job terms
// they derive (job-terms.ts); the delay/reject rule for jobs that wait; re-placement of tasks
// from departed machines with the policy's own chooser; the dedicated-offer rule of the Java Market paper.
import { benefitAt } from "../benefit.ts";
import type { Decision, Move, Replacement, TickResult } from "../decision.ts";
import type { Job, PendingTask } from "../job.ts";
import type { Reason } from "../reasons.ts";
import { createContext, type SearchContext } from "../pipeline/context.ts";
import { buildPlan, expandTasks, type Chooser } from "../pipeline/plan.ts";
import type { DelayedJob, MarketState } from "../state/market-state.ts";
import { jobLoads, TermsBook, deriveTerms, type JobLoad, type JobTerms } from "./job-terms.ts";
import { delayOrReject, reviewDelayed } from "./outcomes.ts";
import { considerDedicatedOffer } from "./purchase.ts";
import type { Policy } from "./types.ts";
import type { PolicyProfile } from "./profile.ts";

/** Everything one decision of a share policy reads: the state, the time, the jobs in the market. */
export interface ShareCall {
  readonly state: MarketState;
  readonly now: number;
  readonly profile: PolicyProfile;
  readonly loads: Map<string, JobLoad>;
  readonly book: TermsBook;
  termsOf(jobId: string): JobTerms;
}

export interface ShareRules {
  /** Decide on one job, given its terms. Never mutates the state. */
  decide(call: ShareCall, job: Job, terms: JobTerms): Decision;
  /** Machine for one task of `jobId` (new or returned from a departed machine). */
  chooser(call: ShareCall, jobId: string): Chooser;
  /** Which changed delayed jobs to re-evaluate, in order (default: all, oldest first). */
  order?(call: ShareCall, candidates: DelayedJob[]): DelayedJob[];
  /** Moves of placed tasks at a tick. */
  moves?(call: ShareCall): Move[];
}

export function shareCall(state: MarketState, now: number, profile: PolicyProfile, book: TermsBook): ShareCall {
  const loads = jobLoads(state);
  return { state, now, profile, loads, book, termsOf: (id) => book.of(id, loads.get(id), now) };
}

/** A search context for the share policies: they keep no usage bounds of their own. */
export function unboundedContext(call: ShareCall): SearchContext {
  const ctx = createContext(call.state, call.now, call.profile.minReputation);
  ctx.bounded = false;
  return ctx;
}

/** The job's placement with the policy's chooser, no completion-time limit. */
export function planJob(call: ShareCall, job: Job, choose: Chooser) {
  return buildPlan(unboundedContext(call), expandTasks(job), Infinity, choose);
}

/** A job that cannot start now waits, and is rejected once it has waited the maximum. */
export function waitOrReject(call: ShareCall, job: Job, why: Reason, never = false): Decision {
  if (never) return { outcome: "rejected", jobId: job.id, reasons: [why] };
  return delayOrReject(call.state, job, call.now, why);
}

/** Free slots per machine row (slots minus running and queued tasks), and their sum. */
export function freeSlots(state: MarketState): { free: Int32Array; total: number } {
  const m = state.machines;
  const free = new Int32Array(m.end);
  let total = 0;
  for (let s = 0; s < m.end; s++) {
    if (!m.live(s) || m.f.available[s] === 0) continue;
    free[s] = Math.max(0, m.f.slots[s]! - m.i.running[s]! - m.i.queued[s]!);
    total += free[s]!;
  }
  return { free, total };
}

export function buildSharePolicy(name: string, profile: PolicyProfile, rules: ShareRules): Policy {
  const book = new TermsBook(profile.terms);
  const decide = (state: MarketState, job: Job, now: number, terms: JobTerms): Decision => {
    if (state.machineCount === 0) return { outcome: "delayed", jobId: job.id, reasons: [{ code: "no-machines" }] };
    return rules.decide(shareCall(state, now, profile, book), job, terms);
  };
  return {
    name,
    profile,
    admit: (state, job, now) => decide(state, job, now, book.remember(job, now)),
    quote: (state, job, now) => decide(state, job, now, deriveTerms(job, profile.terms, now)),
    place(state, tasks: readonly PendingTask[], now): Replacement {
      const out: Replacement = { placements: [], unplaced: [] };
      if (tasks.length === 0) return out;
      const call = shareCall(state, now, profile, book);
      const ctx = unboundedContext(call);
      for (const t of [...tasks].sort((a, b) => b.work - a.work)) {
        const r = buildPlan(ctx, [[t]], Infinity, rules.chooser(call, t.jobId));
        if (r.ok) out.placements.push(...r.plan.placements);
        else out.unplaced.push({ task: t, reasons: [r.reason] });
      }
      return out;
    },
    tick(state, now): TickResult {
      const call = shareCall(state, now, profile, book);
      book.prune(state, call.loads, now, state.settings.maxDelaySeconds);
      const { reject, changed } = reviewDelayed(state, now);
      const reevaluate = (rules.order ? rules.order(call, changed) : changed).map((d) => d.job.id);
      // A profile whose migration rule is "none" never moves a task, whatever the policy.
      const moving = rules.moves && profile.migration.rule !== "none";
      return { reevaluate, reject, moves: moving ? rules.moves!(call) : [] };
    },
    considerDedicatedOffer,
  };
}
