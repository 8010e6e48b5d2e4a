import { describe, expect, it } from "vitest";
import { taskOutcome, type TaskOutcomeInput } from "./task-outcome.ts";
import { DEFAULT_TERMS, SettlementTerms } from "./settlement.ts";

const run = (over: Partial<TaskOutcomeInput>): TaskOutcomeInput => ({
  decidesNow: false,
  failureConfirmed: false,
  failedRuns: 0,
  copiesDisagree: false,
  attempts: 1,
  tasksDone: 0,
  failedTasks: 0,
  taskCount: 10,
  ...over,
});

describe("what a reported run does to its task and job", () => {
  it("completes the job with its last task decided", () => {
    expect(taskOutcome(DEFAULT_TERMS, run({ decidesNow: true, tasksDone: 9 }))).toMatchObject({ allDecided: true, finishesJob: true, givesUp: false, succeeded: 10 });
    expect(taskOutcome(DEFAULT_TERMS, run({ decidesNow: true, tasksDone: 8 }))).toMatchObject({ allDecided: false, finishesJob: false, givesUp: false });
  });

  it("runs an unconfirmed failure again until the task failed maxAttempts times", () => {
    const t = SettlementTerms.parse({ maxAttempts: 3 });
    expect(taskOutcome(t, run({ failedRuns: 2 })).givesUp).toBe(false);
    expect(taskOutcome(t, run({ failedRuns: 3 })).givesUp).toBe(true);
    // A confirmed failure is the program's: the task is decided, not given up on attempts.
    expect(taskOutcome(t, run({ failedRuns: 3, failureConfirmed: true })).givesUp).toBe(false);
  });

  it("stops the job after confirmedFailureLimit tasks failed for good", () => {
    const t = SettlementTerms.parse({ confirmedFailureLimit: 3 });
    expect(taskOutcome(t, run({ failureConfirmed: true, failedRuns: 2, failedTasks: 1 }))).toMatchObject({ stopsOnFailures: false, givesUp: false, failedTasks: 2 });
    expect(taskOutcome(t, run({ failureConfirmed: true, failedRuns: 2, failedTasks: 2 }))).toMatchObject({ stopsOnFailures: true, givesUp: true, failedTasks: 3 });
  });

  it("fails a job whose every task failed, and completes one with any success", () => {
    expect(taskOutcome(DEFAULT_TERMS, run({ failureConfirmed: true, failedRuns: 2, taskCount: 1 }))).toMatchObject({ allDecided: true, finishesJob: false, stopsOnFailures: true });
    expect(taskOutcome(DEFAULT_TERMS, run({ failureConfirmed: true, failedRuns: 2, taskCount: 2, tasksDone: 1 }))).toMatchObject({ finishesJob: true, stopsOnFailures: false, givesUp: false });
  });

  it("gives up copies that never agree once the task ran maxAttempts times", () => {
    expect(taskOutcome(DEFAULT_TERMS, run({ copiesDisagree: true, attempts: DEFAULT_TERMS.maxAttempts - 1 })).givesUp).toBe(false);
    expect(taskOutcome(DEFAULT_TERMS, run({ copiesDisagree: true, attempts: DEFAULT_TERMS.maxAttempts })).givesUp).toBe(true);
  });
});
