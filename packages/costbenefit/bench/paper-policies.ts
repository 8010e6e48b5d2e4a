// bench:policies --workload tpds2000 --profile paper [--runs N] [--seed S] [--also a,b] [--workers W] [--bands B] [--json]
// The TPDS 2000 paper's four algorithms (src/paper) on its cluster with the `paper` profile's
// constants, against its published averages; `--also` runs market policies on the same jobs
// under the same machine model. Runs are split across worker threads, one per core.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { isPolicyName, type PolicyName } from "../src/index.ts";
import { PAPER_POLICY_NAMES } from "../src/paper/paper-policy.ts";
import { PAPER_PROFILE } from "../src/paper/profile.ts";
import { byJobMean, byRunMean } from "../src/sim/stats.ts";
import { intArg, table } from "./args.ts";
import { PUBLISHED } from "./paper-published.ts";
import type { RunsRequest, RunsResult } from "./paper-runs.ts";

/** Issue 15's targets: each average within 25%, each ratio within 0.08, ours <= 0.85 x E-Mosix. */
const AVERAGE_TOLERANCE = 0.25;
const RATIO_TOLERANCE = 0.08;
const BEAT = 0.85;

function runWorkers(req: Omit<RunsRequest, "from" | "to">, runs: number, workers: number): Promise<RunsResult[]> {
  const chunk = Math.ceil(runs / workers);
  const jobs: Promise<RunsResult>[] = [];
  for (let from = 0; from < runs; from += chunk) {
    const data: RunsRequest = { ...req, from, to: Math.min(runs, from + chunk) };
    jobs.push(new Promise((resolve, reject) => {
      // The bench runs TypeScript through tsx; a worker thread registers the same loader first.
      const boot = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.resolve("./paper-runs.ts"))}); });`;
      const w = new Worker(boot, { eval: true, workerData: data });
      w.once("message", resolve);
      w.once("error", reject);
    }));
  }
  return Promise.all(jobs);
}

function merge(parts: RunsResult[]): RunsResult {
  const out: RunsResult = { offeredLoad: [], byPolicy: {} };
  for (const p of parts) {
    out.offeredLoad.push(...p.offeredLoad);
    for (const [k, v] of Object.entries(p.byPolicy)) {
      const b = (out.byPolicy[k] ??= { slowdownSum: [], completed: [], slowdownMean: [], thrashShare: [] });
      b.slowdownSum.push(...v.slowdownSum);
      b.completed.push(...v.completed);
      b.slowdownMean.push(...v.slowdownMean);
      b.thrashShare.push(...v.thrashShare);
    }
  }
  return out;
}

export async function paperBench(args: Record<string, string | true>): Promise<void> {
  if (args.workload !== undefined && args.workload !== "tpds2000") throw new Error("--profile paper runs the tpds2000 workload only");
  const runs = intArg(args, "runs", 3000);
  const seed = intArg(args, "seed", 1);
  const workers = Math.max(1, intArg(args, "workers", availableParallelism()));
  const json = args.json === true;
  const also = typeof args.also === "string" ? args.also.split(",").filter((s) => s.length > 0) : [];
  for (const n of also) if (!isPolicyName(n)) throw new Error(`--also: unknown market policy ${n}`);
  // --bands B: offered-load bands of equal run counts, for the slowdown-against-load plot.
  const bandCount = intArg(args, "bands", 8);
  const started = performance.now();
  const res = merge(await runWorkers({ seed, profile: PAPER_PROFILE, paper: [...PAPER_POLICY_NAMES], market: also as PolicyName[] }, runs, workers));
  const seconds = (performance.now() - started) / 1000;

  const summarize = (key: string) => {
    const b = res.byPolicy[key]!;
    const j = byJobMean(b.slowdownSum, b.completed);
    const r = byRunMean(b.slowdownMean);
    const thrashing = b.thrashShare.reduce((a, x) => a + x, 0) / b.thrashShare.length;
    return { slowdownByJob: j.mean, slowdownByRun: r.mean, ci95ByJob: j.ci95, ci95ByRun: r.ci95, thrashing };
  };
  const policies = Object.fromEntries(PAPER_POLICY_NAMES.map((n) => {
    const s = summarize(n);
    const p = PUBLISHED[n];
    const within = Math.abs(s.slowdownByJob / p.byJob - 1) <= AVERAGE_TOLERANCE && Math.abs(s.slowdownByRun / p.byRun - 1) <= AVERAGE_TOLERANCE;
    return [n, { ...s, paper: p, withinTarget: within }];
  }));
  const ratio = (a: string, b: string): number => policies[a]!.slowdownByJob / policies[b]!.slowdownByJob;
  const paperRatio = { "e-pvm/pvm": PUBLISHED["e-pvm"].byJob / PUBLISHED.pvm.byJob, "e-mosix/mosix": PUBLISHED["e-mosix"].byJob / PUBLISHED.mosix.byJob };
  const ratios = {
    "e-pvm/pvm": ratio("e-pvm", "pvm"),
    "e-mosix/mosix": ratio("e-mosix", "mosix"),
    paper: paperRatio,
    withinTarget: Math.abs(ratio("e-pvm", "pvm") - paperRatio["e-pvm/pvm"]) <= RATIO_TOLERANCE && Math.abs(ratio("e-mosix", "mosix") - paperRatio["e-mosix/mosix"]) <= RATIO_TOLERANCE,
  };
  const market = Object.fromEntries(also.map((n) => [n, summarize(`market:${n}`)]));
  const bestName = also.reduce<string | undefined>((b, n) => (b === undefined || market[n]!.slowdownByJob < market[b]!.slowdownByJob ? n : b), undefined);
  const best = bestName === undefined ? undefined : {
    policy: bestName,
    slowdownByJob: market[bestName]!.slowdownByJob,
    slowdownByRun: market[bestName]!.slowdownByRun,
    overPaperEMosix: market[bestName]!.slowdownByJob / policies["e-mosix"]!.slowdownByJob,
    target: BEAT,
  };

  // Bands of equal run counts by offered load (the paper's "pyramid": gains grow with load).
  const order = res.offeredLoad.map((_, i) => i).sort((a, b) => res.offeredLoad[a]! - res.offeredLoad[b]!);
  const keys = [...PAPER_POLICY_NAMES, ...also.map((n) => `market:${n}`)];
  const loadBands = Array.from({ length: Math.min(bandCount, runs) }, (_, k) => {
    const idx = order.slice(Math.floor((k * runs) / bandCount), Math.floor(((k + 1) * runs) / bandCount));
    const loads = idx.map((i) => res.offeredLoad[i]!);
    const slowdownByJob = Object.fromEntries(keys.map((key) => {
      const b = res.byPolicy[key]!;
      const s = idx.reduce((a, i) => a + b.slowdownSum[i]!, 0);
      const c = idx.reduce((a, i) => a + b.completed[i]!, 0);
      return [key.replace(/^market:/, "market "), c > 0 ? s / c : null];
    }));
    return { offeredLoad: [loads[0]!, loads[loads.length - 1]!], meanLoad: loads.reduce((a, x) => a + x, 0) / loads.length, runs: idx.length, slowdownByJob };
  }).filter((b) => b.runs > 0);

  if (json) {
    console.log(JSON.stringify({ workload: "tpds2000", profile: "paper", runs, seed, seconds, workers, parameters: PAPER_PROFILE, policies, ratios, market, best, loadBands }));
    return;
  }
  console.log(`tpds2000, paper profile: ${runs} runs, seed ${seed}, ${seconds.toFixed(1)} s on ${workers} worker(s)\n`);
  const rows: (string | number)[][] = [["policy", "by job", "95% CI", "paper", "by run", "95% CI", "paper", "within 25%", "thrashing"]];
  for (const n of PAPER_POLICY_NAMES) {
    const p = policies[n]!;
    rows.push([n, p.slowdownByJob, `${p.ci95ByJob[0].toFixed(2)}–${p.ci95ByJob[1].toFixed(2)}`, p.paper.byJob, p.slowdownByRun, `${p.ci95ByRun[0].toFixed(2)}–${p.ci95ByRun[1].toFixed(2)}`, p.paper.byRun, p.withinTarget ? "yes" : "NO", `${(100 * p.thrashing).toFixed(1)}%`]);
  }
  for (const n of also) {
    const p = market[n]!;
    rows.push([`market ${n}`, p.slowdownByJob, `${p.ci95ByJob[0].toFixed(2)}–${p.ci95ByJob[1].toFixed(2)}`, "", p.slowdownByRun, `${p.ci95ByRun[0].toFixed(2)}–${p.ci95ByRun[1].toFixed(2)}`, "", "", `${(100 * p.thrashing).toFixed(1)}%`]);
  }
  console.log(table(rows));
  console.log(`\nE-PVM/PVM = ${ratios["e-pvm/pvm"].toFixed(3)} (paper ${paperRatio["e-pvm/pvm"].toFixed(3)}); E-Mosix/Mosix = ${ratios["e-mosix/mosix"].toFixed(3)} (paper ${paperRatio["e-mosix/mosix"].toFixed(3)}); within ${RATIO_TOLERANCE}: ${ratios.withinTarget ? "yes" : "NO"}`);
  if (best) console.log(`best market policy: ${best.policy} ${best.slowdownByJob.toFixed(3)} = ${best.overPaperEMosix.toFixed(3)} x the paper's E-Mosix here (target <= ${BEAT})`);
  const bandRows: (string | number)[][] = [["offered load", "runs", ...keys.map((k) => k.replace(/^market:/, "market "))]];
  for (const b of loadBands) bandRows.push([`${b.offeredLoad[0]!.toFixed(3)}-${b.offeredLoad[1]!.toFixed(3)}`, b.runs, ...Object.values(b.slowdownByJob).map((x) => x ?? "")]);
  console.log(`\nslowdown by job, by the run's offered load:\n\n${table(bandRows)}`);
}
