// The `paper` profile: every constant the TPDS 2000 paper did not publish, in one place, with the
// reason for its value (README, "The paper's cluster results"). Plain data: the bench may override
// any of it to sweep.
import { TPDS2000_DEFAULTS, type Tpds2000Options } from "../sim/workloads/tpds2000.ts";
import type { EMosixParameters } from "./first-cheaper.ts";
import type { MosixParameters } from "./mosix.ts";
import { PAPER_N } from "./paper-cost.ts";

export interface PaperProfile {
  /** The cost's base n (the paper: the number of machines, 6). */
  n: number;
  workload: Tpds2000Options;
  mosix: MosixParameters;
  eMosix: EMosixParameters;
}

export const PAPER_PROFILE: PaperProfile = {
  n: PAPER_N,
  workload: {
    ...TPDS2000_DEFAULTS,
    jobRate: [0.05, 0.15],
    rMin: 0.05,
    mMin: 0.05,
  },
  mosix: { tickSeconds: 1, subset: 2, threshold: 0, arrival: "round-robin" },
  eMosix: { intervalSeconds: 1, offerSet: 2 },
};

/** The profile with some fields replaced (one level deep for the nested groups). */
export function withOverrides(base: PaperProfile, o: Partial<{ [K in keyof PaperProfile]: Partial<PaperProfile[K]> }>): PaperProfile {
  return {
    n: o.n ?? base.n,
    workload: { ...base.workload, ...o.workload },
    mosix: { ...base.mosix, ...o.mosix },
    eMosix: { ...base.eMosix, ...o.eMosix },
  };
}
