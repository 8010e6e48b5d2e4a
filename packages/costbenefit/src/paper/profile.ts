// The `paper` profile: every constant the TPDS 2000 paper did not publish, in one place, with the
// reason for its value (README, "The paper's cluster results"). Plain data: the bench may override
// any of it to sweep.
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

export const PAPER_PROFILE: PaperProfile = {
  n: PAPER_N,
  cpuLoad: "jobs",
  workload: {
    ...TPDS2000_DEFAULTS,
    // Searched (README): the published averages need slowdowns near 10 for every policy while round
    // robin, which gives the 90 MHz machine a sixth of the jobs, stays near 15. That happens only
    // when bursts carry the load: a low steady rate (0.009-0.012 jobs per second, about 0.014 of
    // the cluster's capacity on average) whose arrivals are half of the time batches of up to 85
    // jobs arriving at once. At the paper's one job per 10 s round robin saturates the small
    // machine and its slowdown runs to the hundreds (issue 15).
    jobRate: [0.009, 0.012],
    batchFraction: 0.5,
    batchMax: 85,
    // A batch job has the ordinary CPU demand: with 10 x, bursts of 85 hold the cluster for
    // thousands of seconds and every slowdown passes 30.
    batchCpuFactor: 1,
    // CPU demand 2/r s with r >= 0.05: at most 40 s, 6.3 s on average.
    rMin: 0.05,
    // Memory (1/m)% of 64 MB with m >= 0.1: at most 6.4 MB, so a burst of 85 fits in the
    // cluster's 280 MB only when spread by memory; smaller caps made round robin thrash and
    // E-PVM / PVM fall to 0.4.
    mMin: 0.1,
  },
  // Mosix: every 5 s each machine sends its load to 1 random machine, which keeps it in its load
  // vector until that machine reports again (the paper's load-vector exchange), and balances by
  // those possibly stale loads; a job moves when the source's load (jobs per unit speed) exceeds
  // the target's after the move by 3. With fresh loads from one machine every 2 s (the first
  // profile) Mosix was 9.34 and E-Mosix / Mosix 0.983; with stale loads every 5 s Mosix is 9.80
  // and the ratio 0.936 on seeds 1-4 (README). Every 4 s gives 0.946-0.948, too near the
  // target's edge (0.951); every 10 s puts Mosix above E-PVM, where the paper has it below.
  mosix: { tickSeconds: 5, subset: 1, threshold: 3, arrival: "random", knowledge: "vector" },
  // E-Mosix: X = 2 s, each job offered to 3 random machines per round.
  eMosix: { intervalSeconds: 2, offerSet: 3 },
  // Moves are free and instant, as we read the paper's simulation. Charging memory / bandwidth
  // seconds of transit (1.25 and 12.5 MB/s, residence 0 or 10 s) left Mosix within 0.2% and made
  // E-Mosix 0-4% worse (README): Mosix moves few jobs, E-Mosix many.
  migration: { bandwidthMbPerSecond: Infinity, minResidenceSeconds: 0 },
};

/** The profile with some fields replaced (one level deep for the nested groups). */
export function withOverrides(base: PaperProfile, o: Partial<{ [K in keyof PaperProfile]: Partial<PaperProfile[K]> }>): PaperProfile {
  return {
    n: o.n ?? base.n,
    cpuLoad: o.cpuLoad ?? base.cpuLoad,
    workload: { ...base.workload, ...o.workload },
    mosix: { ...base.mosix, ...o.mosix },
    eMosix: { ...base.eMosix, ...o.eMosix },
    migration: { ...base.migration, ...o.migration },
  };
}
