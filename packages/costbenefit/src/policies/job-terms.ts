// The share policies need job parameters the public Job does not carry: Co-op tickets (the Computational Co-op paper),
// a Millennium rate (the Millennium paper), a Tycoon bid (the Tycoon paper), a Sharc reservation (the Sharc paper). Rather
// than widen the Job schema the live market stores and validates, each is derived from what every
// job already states, its benefit curve and its work:
// - value V: the curve's maximum benefit, what the consumer is willing to pay at most;
// - interval D: the first time after which the benefit falls (deadline, start of decay, first
//   piecewise breakpoint); a curve that never falls gets slack x its longest task;
// so tickets = V, rate = V per speed-1 minute of its work, bid = (V, D), reservation = work / D.
// A job admitted before the policy was chosen (or before a restart) left no curve in the state:
// it gets V = fallbackValuePerWork x its work in the market and D from its longest task.
import { breakpoints, maxBenefit } from "../benefit.ts";
import type { Job } from "../job.ts";
import type { MarketState } from "../state/market-state.ts";
import type { PolicyProfile } from "./profile.ts";

export interface JobTerms {
  /** Most the consumer pays (credits), never negative. */
  value: number;
  /** Total work of the job, replicas counted (speed-1 seconds). */
  work: number;
  longest: number;
  /** Seconds after arrival by which the job wants its work done. */
  intervalSeconds: number;
  recordedAt: number;
}

type Terms = PolicyProfile["terms"];

export function deriveTerms(job: Job, terms: Terms, now: number): JobTerms {
  let work = 0;
  let longest = 0;
  for (const t of job.tasks) {
    work += t.work * job.replicas;
    longest = Math.max(longest, t.work);
  }
  const first = breakpoints(job.benefit).find((b) => b > 0);
  return { value: Math.max(0, maxBenefit(job.benefit)), work, longest, intervalSeconds: first ?? terms.slack * longest, recordedAt: now };
}

/** What the state knows of one job's tasks in the market right now. */
export interface JobLoad {
  /** Speed of the slots the job's running tasks hold: Co-op's r, resources in use. */
  held: number;
  running: number;
  queued: number;
  /** Work of its tasks still in the market (speed-1 seconds, as placed). */
  work: number;
  longest: number;
}

/** One pass over the tasks in the market, per job. O(tasks). */
export function jobLoads(state: MarketState): Map<string, JobLoad> {
  const out = new Map<string, JobLoad>();
  const speed = state.machines.f.speed;
  for (const t of state.tasks.values()) {
    let l = out.get(t.jobId);
    if (!l) out.set(t.jobId, (l = { held: 0, running: 0, queued: 0, work: 0, longest: 0 }));
    if (t.running) {
      l.held += speed[t.machine]!;
      l.running++;
    } else l.queued++;
    l.work += t.work;
    l.longest = Math.max(l.longest, t.work);
  }
  return out;
}

/**
 * Terms of the jobs a policy has decided on, kept while the job has tasks in the market (or
 * waits delayed): a cache of a pure function of the job, so decisions still replay from the same
 * sequence of calls. Entries of jobs gone from the market are dropped on each tick.
 */
export class TermsBook {
  private readonly byJob = new Map<string, JobTerms>();

  constructor(private readonly terms: Terms) {}

  remember(job: Job, now: number): JobTerms {
    const t = deriveTerms(job, this.terms, now);
    this.byJob.set(job.id, t);
    return t;
  }

  of(jobId: string, load: JobLoad | undefined, now: number): JobTerms {
    const known = this.byJob.get(jobId);
    if (known) return known;
    const work = load?.work ?? 0;
    const longest = load?.longest ?? 0;
    return { value: work * this.terms.fallbackValuePerWork, work, longest, intervalSeconds: Math.max(1, this.terms.slack * longest), recordedAt: now };
  }

  /** Forget jobs with nothing left in the market, a grace period after they were decided. */
  prune(state: MarketState, loads: Map<string, JobLoad>, now: number, graceSeconds: number): void {
    for (const [id, t] of this.byJob) {
      if (!loads.has(id) && !state.delayed.has(id) && now - t.recordedAt > graceSeconds) this.byJob.delete(id);
    }
  }

  get size(): number {
    return this.byJob.size;
  }
}
