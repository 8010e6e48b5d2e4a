// npm run -s bench:policies -- --runs N --seed S [--also a,b] [--variant 'label=base:{json}'] [--by-load] [--json]
// Slowdown of each policy on the TPDS 2000 workload, against the paper's published averages.
// With --profile paper: the paper's own four algorithms instead (bench/paper-policies.ts).
import { createPolicy, createRng, isPolicyName } from "../src/index.ts";
import { z } from "zod";
import type { Policy } from "../src/policies/policy.ts";
import type { PolicyProfileInput } from "../src/policies/profile.ts";
import { simulate } from "../src/sim/simulator.ts";
import { byJobMean, mean } from "../src/sim/stats.ts";
import { TPDS2000_DEFAULTS, tpds2000 } from "../src/sim/workloads/tpds2000.ts";
import { intArg, parseArgs, table } from "./args.ts";

const args = parseArgs(process.argv.slice(2));
if (args.profile !== undefined) {
  if (args.profile !== "paper") throw new Error("--profile: the only profile is paper");
  await (await import("./paper-policies.ts")).paperBench(args);
  process.exit(0);
}
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
// --variant 'label=base:{json}': one more row, a registered policy with profile overrides, e.g.
// 'e-mosix-cost=e-mosix:{"migration":{"rule":"cost","moveRunning":true}}' (README, "Results").
const variants = new Map<string, () => Policy>();
if (typeof args.variant === "string") {
  const m = /^([\w-]+)=([\w-]+):(.*)$/s.exec(args.variant);
  if (!m || !isPolicyName(m[2]!)) throw new Error("--variant takes label=policy:{json overrides}");
  const [, label, base, json] = m as unknown as [string, string, string, string];
  const overrides = JSON.parse(json) as Partial<PolicyProfileInput>;
  try {
    createPolicy(base, overrides); // refuses bad overrides before the runs start
  } catch (e) {
    console.error(`--variant ${label}: ${e instanceof z.ZodError ? z.prettifyError(e) : String(e)}`);
    process.exit(2);
  }
  variants.set(label, () => createPolicy(base, overrides));
}
const names = ["pvm", "e-pvm", "mosix", "e-mosix", "miserly", "random", "fcfs", ...also, ...variants.keys()];
// --by-load: also break the averages down by the run's offered load (work arriving per second
// over the cluster's capacity), to show where in the range each policy's average comes from.
const byLoad = args["by-load"] === true;
const BANDS = [0.3, 0.4, 0.5, 0.6, 0.7, Infinity];
const bandOf = (load: number): number => BANDS.findIndex((b) => load < b);
const bandLabel = (i: number): string => (i === 0 ? `< ${BANDS[0]}` : BANDS[i] === Infinity ? `>= ${BANDS[i - 1]}` : `${BANDS[i - 1]}-${BANDS[i]}`);
const bandSums: Record<string, number[]> = {};
const bandCounts: Record<string, number[]> = {};
const bandRuns = new Array<number>(BANDS.length).fill(0);
// Published averages by job (the Java Market paper section 6; TPDS 2000).
const paper: Record<string, number> = { pvm: 15.4, "e-pvm": 10.7, mosix: 9.42, "e-mosix": 8.2 };

const sums: Record<string, number[]> = {};
const counts: Record<string, number[]> = {};
const runMeans: Record<string, number[]> = {};
// Share of machine time spent thrashing (memory over capacity), mean over runs.
const thrash: Record<string, number> = {};
const started = performance.now();
for (let r = 0; r < runs; r++) {
  const w = tpds2000(createRng(seed).fork(`workload/${r}`), { ...(jobRate ? { jobRate } : {}), adaptiveHorizon });
  const capacity = w.machines.reduce((a, m) => a + m.speed * m.slots, 0);
  const band = bandOf(w.jobs.reduce((a, j) => a + j.tasks[0]!.work, 0) / (TPDS2000_DEFAULTS.durationSeconds * capacity));
  bandRuns[band]!++;
  for (const name of names) {
    const res = simulate(variants.get(name)?.() ?? createPolicy(name), w, createRng(seed).fork(`policy/${r}`));
    (bandSums[name] ??= new Array<number>(BANDS.length).fill(0))[band]! += res.slowdownSum;
    (bandCounts[name] ??= new Array<number>(BANDS.length).fill(0))[band]! += res.completed;
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

const loadBands = BANDS.map((_, i) => ({
  offeredLoad: bandLabel(i),
  runs: bandRuns[i]!,
  slowdownByJob: Object.fromEntries(names.map((n) => [n, bandCounts[n]![i]! > 0 ? bandSums[n]![i]! / bandCounts[n]![i]! : null])),
})).filter((b) => b.runs > 0);

if (json) {
  console.log(JSON.stringify({ workload: "tpds2000", runs, seed, policies, ratios, ...(byLoad ? { loadBands } : {}) }));
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
  if (byLoad) {
    const fmt = (x: number | null | undefined): string | number => (x == null ? "" : x);
    const head = ["offered load", "runs", ...names, "E-PVM/PVM", "E-Mosix/Mosix"];
    const rows: (string | number)[][] = [head];
    for (const b of loadBands) {
      const s = b.slowdownByJob;
      rows.push([b.offeredLoad, b.runs, ...names.map((n) => fmt(s[n])), fmt(s["e-pvm"]! / s.pvm!), fmt(s["e-mosix"]! / s.mosix!)]);
    }
    console.log(`\nslowdown by job, by the run's offered load:\n`);
    console.log(table(rows));
  }
}
