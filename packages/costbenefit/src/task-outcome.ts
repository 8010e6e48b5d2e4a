// What one reported run does to its task and its job (docs/DESIGN.md "Verification"): whether the
// task is decided, given up, or runs again, and whether the job ends. The limits are the
// settlement terms'; the Market Manager applies the answer and counts nothing itself.
import type { SettlementTerms } from "./settlement.ts";

export interface TaskOutcomeInput {
  /** This report decides its task: a quorum of its copies agrees now (tallyCopies). */
  decidesNow: boolean;
  /** This report confirmed the task's failure: another owner reproduced it (confirmedFailure). */
  failureConfirmed: boolean;
  /** The task's failed runs, this one included, when this run failed; 0 when it succeeded. */
  failedRuns: number;
  /** Every copy ran and no majority agrees: the copies would all run again. */
  copiesDisagree: boolean;
  /** Times the task was handed out so far. */
  attempts: number;
  /** The job's tasks decided before this report: succeeded, failed for good, and all of them. */
  tasksDone: number;
  failedTasks: number;
  taskCount: number;
}

export interface TaskOutcome {
  /** The job's tasks succeeded and failed for good, this report counted. */
  succeeded: number;
  failedTasks: number;
  /** Every task of the job is decided after this report. */
  allDecided: boolean;
  /** The job completes: every task decided and at least one succeeded. */
  finishesJob: boolean;
  /** The job stops for its confirmed failures: every task decided and none succeeded, or `confirmedFailureLimit` tasks failed. */
  stopsOnFailures: boolean;
  /** The task is given up and the job fails: it stopped on failures, or the task ran `maxAttempts` times without a verdict. */
  givesUp: boolean;
}

export function taskOutcome(t: SettlementTerms, i: TaskOutcomeInput): TaskOutcome {
  const failedTasks = i.failedTasks + (i.failureConfirmed ? 1 : 0);
  const succeeded = i.tasksDone + (i.decidesNow ? 1 : 0);
  const allDecided = (i.decidesNow || i.failureConfirmed) && succeeded + failedTasks >= i.taskCount;
  const finishesJob = allDecided && succeeded > 0;
  const stopsOnFailures = i.failureConfirmed && !finishesJob && (allDecided || failedTasks >= t.confirmedFailureLimit);
  const givesUp =
    stopsOnFailures ||
    (i.failedRuns > 0 && !i.failureConfirmed && i.failedRuns >= t.maxAttempts) ||
    (i.copiesDisagree && i.attempts >= t.maxAttempts);
  return { succeeded, failedTasks, allDecided, finishesJob, stopsOnFailures, givesUp };
}
