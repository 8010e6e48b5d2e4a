// A job that does not say how much work its tasks are is admitted in two steps: its first tasks run
// as pilots, each paid for the work the market's clock vouches it did up to a small stated cap,
// and the rest is planned and priced from the work the pilots were measured to do. A consumer's
// guess then never decides admission, and the pilots cost at most what their quote states.
import type { BenefitCurve } from "./benefit.ts";
import type { Decision } from "./decision.ts";
import type { Job } from "./job.ts";
import type { Reason } from "./reasons.ts";
import { measuredWork, type SettlementTerms, type WorkSample } from "./settlement.ts";

/** How many tasks of a job without a work estimate run first, as pilots. */
export const PILOT_TASKS = 3;

/**
 * The speed of the reference machine the work unit is defined by (docs/DESIGN.md "Machines"). A task
 * cannot run longer than its wall-time limit, so on the reference machine its work is at most
 * `wallSeconds * REFERENCE_SPEED`.
 */
export const REFERENCE_SPEED = 1;

/** The number of pilots of a job of `taskCount` tasks. */
export function pilotCount(taskCount: number): number {
  return Math.max(0, Math.min(PILOT_TASKS, Math.floor(taskCount)));
}

/**
 * The work the pilots are planned and priced at: the most a pilot is paid for (`pilotWorkCapSeconds`),
 * or its wall-time limit on the reference machine when that is less. The pilots' quote is then the
 * most they can cost.
 */
export function provisionalWork(terms: SettlementTerms, wallSeconds: number): number {
  return Math.max(1e-3, Math.min(terms.pilotWorkCapSeconds, wallSeconds * REFERENCE_SPEED));
}

/** One pilot run's measurement of the work per task (settlement.ts `workSample`) and who ran it. */
export type PilotRun = WorkSample;

/** The work per task the pilots measured (settlement.ts measuredWork over every owner that ran one); undefined without runs. */
export function pilotWork(runs: readonly PilotRun[]): number | undefined {
  return measuredWork(runs, 1);
}

/**
 * The benefit left for the remainder once the pilots' price is committed: the curve lowered by
 * that price, so the two prices together never exceed b(j, t).
 */
export function loweredBenefit(curve: BenefitCurve, by: number): BenefitCurve {
  const d = Math.max(0, by);
  switch (curve.kind) {
    case "constant":
      return { ...curve, value: curve.value - d };
    case "deadline":
      return { ...curve, value: curve.value - d, penalty: (curve.penalty ?? 0) - d };
    case "linear-decay":
      return { ...curve, value: curve.value - d, floor: curve.floor - d };
    case "piecewise":
      return { ...curve, points: curve.points.map((p) => ({ t: p.t, value: p.value - d })) };
  }
}

/** How a policy answers a job (its `admit`, or its `quote`). */
export type Answer = (job: Job) => Decision;

const withReason = (d: Decision, reason: Reason): Decision => ({ ...d, reasons: [...d.reasons, reason] });

/**
 * Step one: the pilots alone, the first `pilotCount` tasks of `job` (whose own work figures are
 * ignored), at the provisional work. The job's quote is this decision: its price is the pilots'.
 */
export function pilotJob(terms: SettlementTerms, job: Job, wallSeconds: number): Job {
  const k = pilotCount(job.tasks.length);
  const work = provisionalWork(terms, wallSeconds);
  return { ...job, tasks: job.tasks.slice(0, k).map((t) => ({ ...t, work })) };
}

export function decidePilots(answer: Answer, terms: SettlementTerms, job: Job, wallSeconds: number): Decision {
  const pilots = pilotJob(terms, job, wallSeconds);
  const d = answer(pilots);
  return withReason(d, {
    code: "pilot-tasks",
    pilots: pilots.tasks.length,
    tasks: job.tasks.length,
    provisionalWorkPerTask: provisionalWork(terms, wallSeconds),
    wallSeconds,
    atMost: d.outcome === "admitted" ? d.price : null,
  });
}

export interface RemainderInput {
  /** The job's tasks after the pilots (their own work figures are replaced by the measured work). */
  job: Job;
  pilots: number;
  runs: readonly PilotRun[];
  wallSeconds: number;
  /** What the pilots were priced at: the remainder's benefit is the curve lowered by it. */
  pilotPrice: number;
}

/**
 * Step two, once the pilots have finished: the remaining tasks planned at the measured work,
 * against the benefit the pilots' price leaves. Admitted, delayed or rejected like any job, with
 * a `planned-from-pilots` reason saying what was measured.
 */
export function decideRemainder(answer: Answer, terms: SettlementTerms, r: RemainderInput): { decision: Decision; workPerTask: number } {
  const workPerTask = pilotWork(r.runs) ?? provisionalWork(terms, r.wallSeconds);
  const job: Job = { ...r.job, benefit: loweredBenefit(r.job.benefit, r.pilotPrice), tasks: r.job.tasks.map((t) => ({ ...t, work: workPerTask })) };
  const decision = withReason(answer(job), {
    code: "planned-from-pilots",
    pilots: r.pilots,
    runs: r.runs.length,
    measuredWorkPerTask: workPerTask,
    provisionalWorkPerTask: provisionalWork(terms, r.wallSeconds),
  });
  return { decision, workPerTask };
}
