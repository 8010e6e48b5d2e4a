import type { Market } from "../market/market.ts";
import type { LiveJob, LiveMachine } from "../market/live.ts";
import type { Tx } from "../ledger/ledger.ts";
import { MAX_SPEED } from "./machines.ts";

// Measured run times refine the two estimates the engine plans with: each job's work per task
// (the consumer's guess) and each machine's speed (its benchmark). Moving averages, so one odd
// run (a busy browser tab) moves them only a little.
const JOB_WEIGHT = 0.3;
const MACHINE_WEIGHT = 0.1;
// Runs shorter than this measure start-up more than work.
const MIN_SECONDS = 0.02;

export async function refine(market: Market, tx: Tx, machine: LiveMachine, job: LiveJob, seconds: number) {
  if (!(seconds >= MIN_SECONDS)) return;
  const measuredWork = seconds * machine.speed;
  const workPerTask = (1 - JOB_WEIGHT) * job.workPerTask + JOB_WEIGHT * measuredWork;
  const observedSpeed = job.workPerTask / seconds;
  const speed = Math.min(MAX_SPEED, (1 - MACHINE_WEIGHT) * machine.speed + MACHINE_WEIGHT * observedSpeed);
  await tx.job.update({ where: { id: job.id }, data: { workPerTask } });
  await tx.machine.update({ where: { id: machine.id }, data: { speed } });
  // Memory follows the database only after the commit; these are estimates, so a rolled-back
  // transaction leaving them slightly ahead costs nothing but a slightly different next plan.
  job.workPerTask = workPerTask;
  machine.speed = speed;
  market.engine.addMachine(machine, market.clock.now());
}
