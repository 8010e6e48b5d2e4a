// bench:policies --workload tpds2000 --profile paper [--only stated|calibrated] [--runs N] [--seed S] [--also a,b] [--workers W] [--bands B] [--json]
// The TPDS 2000 paper's four algorithms (src/paper) on its cluster under two profiles, each against
// the published figures: `stated`, only what the paper states and neutral choices where it is
// silent (src/paper/stated.ts), and `calibrated`, constants fitted to the published figures
// (src/paper/profile.ts), with Mosix also at its own 1 s load exchange beside the fitted 10 s.
// `--also` runs market policies on the same jobs under the same machine model. Runs are split
// across worker threads, one per core.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { isPolicyName, type PolicyName } from "../src/index.ts";
import { PAPER_POLICY_NAMES } from "../src/paper/paper-policy.ts";
import { CALIBRATED_DEPARTURES, CALIBRATED_PROFILE, type PaperProfile } from "../src/paper/profile.ts";
import { STATED_PROFILE, STATED_SOURCES } from "../src/paper/stated.ts";
import { intArg, table } from "./args.ts";
import type { PaperRow, RunsRequest, RunsResult } from "./paper-runs.ts";
import { summarizeProfile, type ProfileSummary } from "./paper-summary.ts";

const PAPER_ROWS: PaperRow[] = PAPER_POLICY_NAMES.map((name) => ({ key: name, name }));

const PROFILES: Record<"stated" | "calibrated", { profile: PaperProfile; extra: PaperRow[]; about: object }> = {
  stated: { profile: STATED_PROFILE, extra: [], about: { sources: STATED_SOURCES } },
  calibrated: {
    profile: CALIBRATED_PROFILE,
    // The fitted 10 s exchange is what puts E-Mosix / Mosix near the paper's; Mosix's own is 1 s.
    extra: [{ key: "mosix-1s", label: "Mosix every 1 s", name: "mosix", overrides: { mosix: { tickSeconds: 1 } } }],
    about: { departsFromStated: CALIBRATED_DEPARTURES },
  },
};
type ProfileName = keyof typeof PROFILES;

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

const ci = (c: [number, number]): string => `${c[0].toFixed(2)}–${c[1].toFixed(2)}`;

function print(name: ProfileName, s: ProfileSummary & { seconds: number }, runs: number, seed: number, workers: number): void {
  console.log(`\n${name} profile: ${runs} runs, seed ${seed}, offered load ${s.offeredLoad.toFixed(3)} of capacity, ${s.seconds.toFixed(1)} s on ${workers} worker(s)\n`);
  const rows: (string | number)[][] = [["published figure", "paper", "ours", "95% CI", "reproduces"]];
  for (const f of s.figures) rows.push([f.figure, f.paper, f.ours, f.ci95 ? ci(f.ci95) : "", f.reproduces ? "yes" : "NO"]);
  console.log(table(rows));
  const thrash = [...PAPER_POLICY_NAMES.map((n) => [n, s.policies[n].thrashing] as const), ...Object.entries(s.variants).map(([k, v]) => [k, v.thrashing] as const)];
  console.log(`\nmachine time thrashing: ${thrash.map(([n, t]) => `${n} ${(100 * t).toFixed(1)}%`).join(", ")}`);
  for (const [n, p] of Object.entries(s.market)) console.log(`market ${n}: by job ${p.slowdownByJob.toFixed(3)} (${ci(p.ci95ByJob)}), by run ${p.slowdownByRun.toFixed(3)}, thrashing ${(100 * p.thrashing).toFixed(1)}%`);
  if (s.best) console.log(`best market policy: ${s.best.policy} ${s.best.slowdownByJob.toFixed(3)} = ${s.best.overPaperEMosix.toFixed(3)} x the paper's E-Mosix here (target <= ${s.best.target})`);
  const first = s.loadBands[0];
  if (!first) return;
  const bandRows: (string | number)[][] = [["offered load", "runs", ...Object.keys(first.slowdownByJob)]];
  for (const b of s.loadBands) bandRows.push([`${b.offeredLoad[0]!.toFixed(3)}-${b.offeredLoad[1]!.toFixed(3)}`, String(b.runs), ...Object.values(b.slowdownByJob).map((x) => x ?? "")]);
  console.log(`\nslowdown by job, by the run's offered load:\n\n${table(bandRows)}`);
}

export async function paperBench(args: Record<string, string | true>): Promise<void> {
  if (args.workload !== undefined && args.workload !== "tpds2000") throw new Error("--profile paper runs the tpds2000 workload only");
  const runs = intArg(args, "runs", 3000);
  const seed = intArg(args, "seed", 1);
  const workers = Math.max(1, intArg(args, "workers", availableParallelism()));
  const json = args.json === true;
  const also = typeof args.also === "string" ? args.also.split(",").filter((s) => s.length > 0) : [];
  for (const n of also) if (!isPolicyName(n)) throw new Error(`--also: unknown market policy ${n}`);
  // --only stated|calibrated: one profile instead of both.
  if (args.only !== undefined && !(typeof args.only === "string" && Object.hasOwn(PROFILES, args.only))) throw new Error("--only takes stated or calibrated");
  const names = (typeof args.only === "string" ? [args.only] : Object.keys(PROFILES)) as ProfileName[];
  // --bands B: offered-load bands of equal run counts, for the slowdown-against-load plot.
  const bandCount = intArg(args, "bands", 8);

  const profiles: Partial<Record<ProfileName, object>> = {};
  for (const name of names) {
    const { profile, extra, about } = PROFILES[name];
    const started = performance.now();
    const res = merge(await runWorkers({ seed, profile, paper: [...PAPER_ROWS, ...extra], market: also as PolicyName[] }, runs, workers));
    const s = { ...summarizeProfile(res, extra, also, bandCount), seconds: (performance.now() - started) / 1000 };
    if (!json) print(name, s, runs, seed, workers);
    // Infinity (free migration) prints as null in JSON.
    profiles[name] = { parameters: profile, ...about, ...s };
  }
  if (json) console.log(JSON.stringify({ workload: "tpds2000", runs, seed, workers, profiles }));
}
