import { refinedWork } from "@cyclemarket/costbenefit";
import type { Market } from "../market/market.ts";
import type { LiveJob, LiveMachine } from "../market/live.ts";
import type { Tx } from "../ledger/ledger.ts";

// Runs shorter than this measure start-up more than work.
const MIN_SECONDS = 0.02;

/**
 * A measured run refines the job's work per task, the estimate the engine plans and pays with,
 * by the engine's `refinedWork`: the sample is only as long as the machine's benchmarked speed
 * allows, so an inflated report moves it a bounded step. Runs on the consumer's own machines do
 * not count (they would let a consumer vouch for themselves). A machine's speed is never moved by
 * runs: it comes from its benchmark alone, so neither the machine's own reports nor a consumer's
 * bad estimate can raise it.
 */
export async function refine(market: Market, tx: Tx, machine: LiveMachine, job: LiveJob, seconds: number) {
  const workPerTask = refinedWorkOf(market, machine, job, seconds);
  if (workPerTask === null) return;
  await tx.job.update({ where: { id: job.id }, data: { workPerTask } });
  // Memory follows the database only after the commit; an estimate slightly ahead after a
  // rolled-back transaction costs nothing but a slightly different next plan.
  job.workPerTask = workPerTask;
}

/** The job's work per task refined by this run, or null when the run does not count. */
export function refinedWorkOf(market: Market, machine: LiveMachine, job: LiveJob, seconds: number): number | null {
  if (!(seconds >= MIN_SECONDS) || machine.ownerId === job.ownerId) return null;
  return refinedWork(market.settings.terms, {
    reportedSeconds: seconds,
    workPerTask: job.workPerTask,
    speed: machine.speed,
    wallSeconds: job.wallMs / 1000,
  });
}
