// A job that does not say how much work its tasks are is admitted in two steps (issue 13, item 5):
// its first tasks run as pilots, planned at an estimate that cannot be too low, and the rest is
// planned from the work the pilots were measured to do. A consumer's guess then never decides
// admission, and nothing but the market's own measurements (vouched as for pay) plans the rest.
import type { BenefitCurve } from "./benefit.ts";
import type { Decision } from "./decision.ts";
import type { Job } from "./job.ts";
import type { Reason } from "./reasons.ts";
import { runPay, type SettlementTerms } from "./settlement.ts";

/** How many tasks of a job without a work estimate run first, as pilots. */
export const PILOT_TASKS = 3;

/**
 * The speed of the reference machine the work unit is defined by (DESIGN.md "Machines"). A task
 * cannot run longer than its wall-time limit, so on the reference machine its work is at most
 * `wallSeconds * REFERENCE_SPEED`: the pilots are planned, priced and escrowed at that upper bound.
 */
export const REFERENCE_SPEED = 1;

/** The number of pilots of a job of `taskCount` tasks. */
export function pilotCount(taskCount: number): number {
  return Math.max(0, Math.min(PILOT_TASKS, Math.floor(taskCount)));
}

/** The work the pilots are planned at: the most a task can do within its wall-time limit. */
export function provisionalWork(wallSeconds: number): number {
  return Math.max(1e-3, wallSeconds * REFERENCE_SPEED);
}

/** One vouched run of a pilot: what it reported and the benchmarked speed of the machine that ran it. */
export interface PilotRun {
  reportedSeconds: number;
  speed: number;
}

/**
 * The work per task the pilots measured: the mean of their samples, each the seconds the market
 * vouches for (runPay's cap: never past the wall-time limit nor the pay cap on that machine) times
 * the machine's benchmarked speed. Undefined without runs.
 */
export function measuredWork(terms: SettlementTerms, runs: readonly PilotRun[], wallSeconds: number): number | undefined {
  if (runs.length === 0) return undefined;
  const workPerTask = provisionalWork(wallSeconds);
  let sum = 0;
  for (const r of runs) {
    const speed = r.speed > 0 ? r.speed : 1;
    const paid = runPay(terms, { reportedSeconds: r.reportedSeconds, workPerTask, speed, pricePerSecond: 0, wallSeconds, escrowLeft: 0 }).paidSeconds;
    sum += paid * speed;
  }
  // A run that measured nothing (a report of 0 s) still plans at a thousandth of a second.
  return Math.max(1e-3, sum / runs.length);
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
export function pilotJob(job: Job, wallSeconds: number): Job {
  const k = pilotCount(job.tasks.length);
  const work = provisionalWork(wallSeconds);
  return { ...job, tasks: job.tasks.slice(0, k).map((t) => ({ ...t, work })) };
}

export function decidePilots(answer: Answer, job: Job, wallSeconds: number): Decision {
  const pilots = pilotJob(job, wallSeconds);
  return withReason(answer(pilots), {
    code: "pilot-tasks",
    pilots: pilots.tasks.length,
    tasks: job.tasks.length,
    provisionalWorkPerTask: provisionalWork(wallSeconds),
    wallSeconds,
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
  const workPerTask = measuredWork(terms, r.runs, r.wallSeconds) ?? provisionalWork(r.wallSeconds);
  const job: Job = { ...r.job, benefit: loweredBenefit(r.job.benefit, r.pilotPrice), tasks: r.job.tasks.map((t) => ({ ...t, work: workPerTask })) };
  const decision = withReason(answer(job), {
    code: "planned-from-pilots",
    pilots: r.pilots,
    runs: r.runs.length,
    measuredWorkPerTask: workPerTask,
    provisionalWorkPerTask: provisionalWork(r.wallSeconds),
  });
  return { decision, workPerTask };
}
