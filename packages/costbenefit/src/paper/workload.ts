// One run's jobs for the paper's cluster: the TPDS 2000 workload (sim/workloads/tpds2000.ts) with
// a paper profile's constants (stated or calibrated), as raw jobs for the paper's simulator and as a market Workload
// for the market's own policies on the same jobs.
import type { Rng } from "../rng.ts";
import type { Workload } from "../sim/simulator.ts";
import { tpds2000, type RawJob } from "../sim/workloads/tpds2000.ts";
import type { PaperMachine } from "./simulator.ts";
import type { PaperProfile } from "./profile.ts";

export interface PaperRun {
  machines: PaperMachine[];
  jobs: RawJob[];
  /** CPU work arriving per second over the cluster's capacity. */
  offeredLoad: number;
  market: Workload;
}

export function paperRun(rng: Rng, p: PaperProfile): PaperRun {
  const market = tpds2000(rng, p.workload);
  const machines = market.machines.map((m) => ({ speed: m.speed * m.slots, memoryMb: m.memoryPerSlotMb * m.slots }));
  const jobs = market.jobs.map((j) => ({ arrivedAt: j.arrivedAt, work: j.tasks[0]!.work, memoryMb: j.tasks[0]!.memoryMb }));
  const capacity = machines.reduce((a, m) => a + m.speed, 0);
  const offeredLoad = jobs.reduce((a, j) => a + j.work, 0) / (p.workload.durationSeconds * capacity);
  return { machines, jobs, offeredLoad, market };
}
