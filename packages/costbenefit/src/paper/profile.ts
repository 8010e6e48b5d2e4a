// The calibrated profile: every constant the TPDS 2000 paper did not publish, chosen so the
// simulation lands on the paper's published averages, in one place with the reason for each value
// (README, "The calibrated profile in detail"). Beside it, stated.ts holds the profile with only
// what the paper states. Plain data: the bench may override any of it to sweep.
import { TPDS2000_DEFAULTS, type Tpds2000Options } from "../sim/workloads/tpds2000.ts";
import type { EMosixParameters } from "./first-cheaper.ts";
import type { MosixParameters } from "./mosix.ts";
import type { MigrationCost } from "./simulator.ts";
import { PAPER_N, type CpuLoad } from "./paper-cost.ts";

export interface PaperProfile {
  /** The cost's base n (the paper: the number of machines, 6). */
  n: number;
  /** How the cost counts CPU load (paper-cost.ts, `CpuLoad`), for E-PVM and E-Mosix alike. */
  cpuLoad: CpuLoad;
  workload: Tpds2000Options;
  mosix: MosixParameters;
  eMosix: EMosixParameters;
  /** What a migration costs in the paper's simulator (simulator.ts, `MigrationCost`). */
  migration: MigrationCost;
}

export const CALIBRATED_PROFILE: PaperProfile = {
  n: PAPER_N,
  cpuLoad: "jobs",
  workload: {
    ...TPDS2000_DEFAULTS,
    // Searched (README, "The calibrated profile in detail"): the published averages need slowdowns near
    // 10 for every policy while round robin, which gives the 90 MHz / 24 MB machine a sixth of the
    // jobs with 9.4% of the capacity, stays near 15. Steady Poisson arrivals cannot do both: at the
    // load where E-PVM's slowdown is 10 (about 0.9 of capacity) round robin saturates the small
    // machine, thrashes it and its slowdown runs to the hundreds (at the paper's one job per 10 s
    // with issue 3's batches, 300). Slowdowns near 10 with round robin near 15 come from bursts:
    // a steady rate of 0.025-0.031 jobs per second, batch members counted (drawn per run), 30% of
    // arrivals a batch of 1-85 jobs arriving at once. That is about 280 jobs and 6-7 batches per
    // 10,000 s run, 0.07 of the cluster's capacity on average: runs differ less from each other
    // than with the first profile's 2-3 batches per run (0.009-0.012 jobs/s, half the arrivals
    // batches, 0.014 of capacity), so the by-run averages sit 6-15% under by-job, as the paper's
    // (7-9%) do, instead of 18-27%. Higher rates overlap the bursts and round robin thrashes again
    // (0.04-0.05 jobs/s: PVM 19.2, E-PVM / PVM 0.55).
    jobRate: [0.025, 0.031],
    batchFraction: 0.3,
    batchMax: 85,
    // A batch job has twice the ordinary CPU (issue 3: 10 x): with 10 x, bursts of 85 hold the
    // cluster for thousands of seconds and every slowdown passes 30.
    batchCpuFactor: 2,
    // CPU demand 2/r s with r >= 0.05: at most 40 s (80 s in a batch), 6.3 s on average.
    rMin: 0.05,
    // Memory (1/m)% of 64 MB with m >= 0.32: at most 2 MB, so only round robin, which ignores
    // memory, thrashes (the 24 MB machine holding a sixth of overlapping bursts), and that is what
    // puts PVM 45% above E-PVM. The cap sets how often: E-PVM / PVM was 0.56 at m >= 0.2, 0.59 at
    // 0.23, 0.68 at 0.3 and 0.75 at 0.35 (500 runs, seed 1); at 0.3 seeds 2 and 3 gave 0.635 and
    // 0.704 over 3,000 runs (round robin's rare thrashing runs make PVM's mean noisy), so 0.32
    // centres it in the target (0.615-0.775).
    mMin: 0.32,
  },
  // Mosix: every 10 s each machine sends its load to 1 random machine, which keeps it in its load
  // vector until that machine reports again (the paper's load-vector exchange), and balances by
  // those possibly stale loads; a job moves when the source's load (jobs per unit speed) exceeds
  // the target's after the move by 3. The interval is unpublished: with this workload 8 s gives
  // E-Mosix / Mosix 0.946, 10 s 0.936-0.941, 12 s 0.934 with Mosix level with E-PVM (the paper has
  // it 12% below). The first profile's fresh loads from one machine every 2 s gave 0.983.
  mosix: { tickSeconds: 10, subset: 1, threshold: 3, arrival: "random", knowledge: "vector" },
  // E-Mosix: X = 2 s, each job offered to 3 random machines per round.
  eMosix: { intervalSeconds: 2, offerSet: 3 },
  // Moves are free and instant, as we read the paper's simulation. Charging memory / bandwidth
  // seconds of transit (1.25 and 12.5 MB/s, residence 0 or 10 s) left Mosix within 0.2% and made
  // E-Mosix 0-4% worse (README): Mosix moves few jobs, E-Mosix many.
  migration: { bandwidthMbPerSecond: Infinity, minResidenceSeconds: 0 },
};

/**
 * Where the calibrated profile departs from the stated one (stated.ts), each fitted to, or chosen
 * while fitting, the published figures; a test checks this list is exactly the fields that differ.
 */
export const CALIBRATED_DEPARTURES: readonly string[] = [
  "workload.jobRate",
  "workload.batchFraction",
  "workload.batchMax",
  "workload.batchCpuFactor",
  "workload.mMin",
  "mosix.tickSeconds",
  "mosix.threshold",
  "eMosix.intervalSeconds",
  "eMosix.offerSet",
];

/** Fields to replace in a profile, one level deep for the nested groups. */
export type Overrides = Partial<{ [K in keyof PaperProfile]: Partial<PaperProfile[K]> }>;

/** The profile with some fields replaced (one level deep for the nested groups). */
export function withOverrides(base: PaperProfile, o: Overrides): PaperProfile {
  return {
    n: o.n ?? base.n,
    cpuLoad: o.cpuLoad ?? base.cpuLoad,
    workload: { ...base.workload, ...o.workload },
    mosix: { ...base.mosix, ...o.mosix },
    eMosix: { ...base.eMosix, ...o.eMosix },
    migration: { ...base.migration, ...o.migration },
  };
}
