// npm run -s bench:policies -- --runs N --seed S [--also a,b] [--json]
// Slowdown of each policy on the TPDS 2000 workload, against the paper's published averages.
import { createPolicy, createRng, isPolicyName } from "../src/index.ts";
import { simulate } from "../src/sim/simulator.ts";
import { byJobMean, mean } from "../src/sim/stats.ts";
import { tpds2000 } from "../src/sim/workloads/tpds2000.ts";
import { intArg, parseArgs, table } from "./args.ts";

const args = parseArgs(process.argv.slice(2));
const runs = intArg(args, "runs", 100);
const seed = intArg(args, "seed", 1);
const json = args.json === true;
// --interarrival lo,hi: the range of mean seconds between jobs, batch members counted (default
// 6.67,20, i.e. 0.05 to 0.15 jobs per second drawn uniformly per run).
const ia = typeof args.interarrival === "string" ? (args.interarrival.split(",").map(Number) as [number, number]) : undefined;
if (ia && (ia.length !== 2 || !ia.every((x) => x > 0))) throw new Error("--interarrival takes lo,hi in seconds");
const jobRate = ia ? ([1 / Math.max(...ia), 1 / Math.min(...ia)] as [number, number]) : undefined;
// --fixed-horizon: keep the compute maximum H at 30 s instead of guessing it online (README, "Results").
const adaptiveHorizon = args["fixed-horizon"] !== true;
// --also a,b,...: more policies after the paper's and the baselines (e.g. the share policies).
const also = typeof args.also === "string" ? args.also.split(",") : [];
for (const n of also) if (!isPolicyName(n)) throw new Error(`--also: unknown policy ${n}`);
const names = ["pvm", "e-pvm", "mosix", "e-mosix", "miserly", "random", "fcfs", ...also];
// Published averages by job (seed 003 section 6; TPDS 2000).
const paper: Record<string, number> = { pvm: 15.4, "e-pvm": 10.7, mosix: 9.42, "e-mosix": 8.2 };

const sums: Record<string, number[]> = {};
const counts: Record<string, number[]> = {};
const runMeans: Record<string, number[]> = {};
// Share of machine time spent thrashing (memory over capacity), mean over runs.
const thrash: Record<string, number> = {};
const started = performance.now();
for (let r = 0; r < runs; r++) {
  const w = tpds2000(createRng(seed).fork(`workload/${r}`), { ...(jobRate ? { jobRate } : {}), adaptiveHorizon });
  for (const name of names) {
    const res = simulate(createPolicy(name), w, createRng(seed).fork(`policy/${r}`));
    (sums[name] ??= []).push(res.slowdownSum);
    (counts[name] ??= []).push(res.completed);
    (runMeans[name] ??= []).push(res.slowdownMean);
    thrash[name] = (thrash[name] ?? 0) + res.thrashSeconds / (w.machines.length * Math.max(1, res.makespan)) / runs;
  }
  if (!json && (r + 1) % Math.max(1, Math.floor(runs / 10)) === 0) process.stderr.write(`  ${r + 1}/${runs} runs\n`);
}

const policies: Record<string, { slowdownByJob: number; slowdownByRun: number; ci95ByJob: [number, number] }> = {};
for (const name of names) {
  const b = byJobMean(sums[name]!, counts[name]!);
  policies[name] = { slowdownByJob: b.mean, slowdownByRun: mean(runMeans[name]!), ci95ByJob: b.ci95 };
}
const ratio = (a: string, b: string) => policies[a]!.slowdownByJob / policies[b]!.slowdownByJob;
const ratios = { "e-pvm/pvm": ratio("e-pvm", "pvm"), "e-mosix/mosix": ratio("e-mosix", "mosix"), paper: { "e-pvm/pvm": 10.7 / 15.4, "e-mosix/mosix": 8.2 / 9.42 } };

if (json) {
  console.log(JSON.stringify({ workload: "tpds2000", runs, seed, policies, ratios }));
} else {
  const rows: (string | number)[][] = [["policy", "slowdown/job", "95% CI", "slowdown/run", "÷ PVM", "÷ Mosix", "paper", "paper ÷ PVM", "paper ÷ Mosix", "thrashing"]];
  for (const name of names) {
    const p = policies[name]!;
    const pp = paper[name];
    rows.push([name, p.slowdownByJob, `${p.ci95ByJob[0].toFixed(2)}–${p.ci95ByJob[1].toFixed(2)}`, p.slowdownByRun, ratio(name, "pvm"), ratio(name, "mosix"), pp ?? "", pp ? pp / 15.4 : "", pp ? pp / 9.42 : "", `${(100 * thrash[name]!).toFixed(1)}%`]);
  }
  console.log(`tpds2000${adaptiveHorizon ? "" : " (fixed H = 30 s)"}: ${runs} runs, seed ${seed}, ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  console.log(table(rows));
  console.log(`\nE-PVM/PVM = ${ratios["e-pvm/pvm"].toFixed(3)} (target <= 0.75, paper 0.695); E-Mosix/Mosix = ${ratios["e-mosix/mosix"].toFixed(3)} (target <= 0.92, paper 0.871)`);
}
