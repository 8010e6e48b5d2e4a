// The TPDS 2000 paper's published averages over 3,000 runs, by job and by run (the Java Market paper section 6).
// By run ("by execution") is the mean over runs of each run's mean slowdown: the paper plots one
// point per execution, its average slowdown, and averages those points.
export const PUBLISHED = {
  pvm: { byJob: 15.404, byRun: 14.334 },
  "e-pvm": { byJob: 10.701, byRun: 9.795 },
  mosix: { byJob: 9.421, byRun: 8.557 },
  "e-mosix": { byJob: 8.203, byRun: 7.479 },
} as const;

/** E-PVM / PVM and E-Mosix / Mosix by job: 0.695 and 0.871. */
export const PAPER_RATIOS = {
  ePvmPvm: PUBLISHED["e-pvm"].byJob / PUBLISHED.pvm.byJob,
  eMosixMosix: PUBLISHED["e-mosix"].byJob / PUBLISHED.mosix.byJob,
};
