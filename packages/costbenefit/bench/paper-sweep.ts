// npx tsx packages/costbenefit/bench/paper-sweep.ts --runs N --seed S [--from F] [--base stated|calibrated] '{profile overrides}' ...
// Exploring the paper's profiles: each JSON argument is one variant (withOverrides over the
// calibrated profile, or the stated one with --base stated, e.g. '{"workload":{"jobRate":[0.05,0.1]},"eMosix":{"intervalSeconds":5}}'), run
// on the same runs as the bench, one thread. Prints per variant the four paper policies' averages
// (by job / by run) against the published ones, the two ratios, and what explains them: jobs and
// offered load per run, share of machine time thrashing, E-Mosix and Mosix moves per job.
import { fileURLToPath } from "node:url";
import { createRng } from "../src/index.ts";
import { createPaperPolicy } from "../src/paper/create.ts";
import { PAPER_POLICY_NAMES, type PaperPolicyName } from "../src/paper/paper-policy.ts";
import { STATED_PROFILE } from "../src/paper/stated.ts";
import { CALIBRATED_PROFILE, withOverrides, type Overrides, type PaperProfile } from "../src/paper/profile.ts";
import { simulatePaper } from "../src/paper/simulator.ts";
import { paperRun } from "../src/paper/workload.ts";
import { intArg, parseArgs, table } from "./args.ts";
import { PAPER_RATIOS, PUBLISHED } from "./paper-published.ts";

export interface VariantFigures {
  jobsPerRun: number;
  offeredLoad: number;
  seconds: number;
  policies: Record<PaperPolicyName, { byJob: number; byRun: number; thrash: number; movesPerJob: number }>;
  ratios: { ePvmPvm: number; eMosixMosix: number };
  /** The largest relative miss of the eight averages, and the larger ratio miss. */
  worstAverage: number;
  worstRatio: number;
  met: boolean;
}

/** The four paper policies over runs [from, from + runs) of `seed`, as the bench runs them. */
export function measure(profile: PaperProfile, runs: number, seed: number, from = 0, abortBeyond?: number): VariantFigures {
  const started = performance.now();
  const acc = Object.fromEntries(PAPER_POLICY_NAMES.map((n) => [n, { sum: 0, n: 0, runMeans: 0, moves: 0, thrash: 0 }]));
  const work = Array.from({ length: runs }, (_, i) => paperRun(createRng(seed).fork(`workload/${from + i}`), profile));
  const jobs = work.reduce((a, w) => a + w.jobs.length, 0);
  const load = work.reduce((a, w) => a + w.offeredLoad, 0);
  let aborted = false;
  for (const name of PAPER_POLICY_NAMES) {
    const a = acc[name]!;
    if (aborted) {
      a.sum = a.n = a.runMeans = NaN;
      continue;
    }
    work.forEach((run, i) => {
      const res = simulatePaper(createPaperPolicy(name, profile), run.machines, run.jobs, createRng(seed).fork(`policy/${from + i}`), profile.migration);
      a.sum += res.slowdownSum;
      a.n += res.completed;
      a.runMeans += res.slowdownMean;
      a.moves += res.migrations;
      a.thrash += res.thrashSeconds / (run.machines.length * Math.max(1, res.makespan));
    });
    // A search point this far off is not worth the slow policies (E-Mosix offers every job every X s).
    if (abortBeyond !== undefined && Math.abs(a.sum / a.n / PUBLISHED[name].byJob - 1) > abortBeyond) aborted = true;
  }
  const policies = Object.fromEntries(PAPER_POLICY_NAMES.map((n) => {
    const a = acc[n]!;
    return [n, { byJob: a.sum / a.n, byRun: a.runMeans / runs, thrash: a.thrash / runs, movesPerJob: a.moves / a.n }];
  })) as VariantFigures["policies"];
  let worstAverage = 0;
  for (const n of PAPER_POLICY_NAMES) {
    worstAverage = Math.max(worstAverage, Math.abs(policies[n].byJob / PUBLISHED[n].byJob - 1), Math.abs(policies[n].byRun / PUBLISHED[n].byRun - 1));
  }
  const ratios = { ePvmPvm: policies["e-pvm"].byJob / policies.pvm.byJob, eMosixMosix: policies["e-mosix"].byJob / policies.mosix.byJob };
  const worstRatio = Math.max(Math.abs(ratios.ePvmPvm - PAPER_RATIOS.ePvmPvm), Math.abs(ratios.eMosixMosix - PAPER_RATIOS.eMosixMosix));
  return {
    jobsPerRun: jobs / runs, offeredLoad: load / runs, seconds: (performance.now() - started) / 1000, policies, ratios,
    worstAverage, worstRatio, met: worstAverage <= 0.25 && worstRatio <= 0.08,
  };
}

export function report(label: string, f: VariantFigures, runs: number, seed: number, from: number): string {
  const rows: (string | number)[][] = [["policy", "by job", "vs paper", "by run", "vs paper", "run/job", "thrash %", "moves/job"]];
  for (const n of PAPER_POLICY_NAMES) {
    const p = f.policies[n];
    rows.push([n, p.byJob, `${(100 * (p.byJob / PUBLISHED[n].byJob - 1)).toFixed(1)}%`, p.byRun, `${(100 * (p.byRun / PUBLISHED[n].byRun - 1)).toFixed(1)}%`, p.byRun / p.byJob, 100 * p.thrash, p.movesPerJob]);
  }
  return `${label}\n  ${runs} runs from ${from}, seed ${seed}: ${f.jobsPerRun.toFixed(0)} jobs/run, offered load ${f.offeredLoad.toFixed(3)}, ${f.seconds.toFixed(1)} s\n`
    + table(rows).replace(/^/gm, "  ")
    + `\n  E-PVM/PVM ${f.ratios.ePvmPvm.toFixed(3)} (${PAPER_RATIOS.ePvmPvm.toFixed(3)})  E-Mosix/Mosix ${f.ratios.eMosixMosix.toFixed(3)} (${PAPER_RATIOS.eMosixMosix.toFixed(3)})  worst average ${(100 * f.worstAverage).toFixed(1)}%${f.met ? "  ALL TARGETS MET" : ""}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  const runs = intArg(args, "runs", 100);
  const seed = intArg(args, "seed", 1);
  const from = intArg(args, "from", 0);
  if (args.base !== undefined && args.base !== "stated" && args.base !== "calibrated") throw new Error("--base takes stated or calibrated");
  const base = args.base === "stated" ? STATED_PROFILE : CALIBRATED_PROFILE;
  const variants = argv.filter((a) => a.startsWith("{"));
  if (variants.length === 0) variants.push("{}");
  for (const v of variants) {
    const profile = withOverrides(base, JSON.parse(v) as Overrides);
    console.log(report(v, measure(profile, runs, seed, from), runs, seed, from));
  }
}
