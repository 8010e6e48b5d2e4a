// One profile's runs summarised against the TPDS 2000 paper's published figures: each average and
// ratio beside the paper's, and whether it reproduces it (issue 15's tolerances), plus the market's
// policies on the same jobs and the slowdown by offered-load band.
import { PAPER_POLICY_NAMES, type PaperPolicyName } from "../src/paper/paper-policy.ts";
import { byJobMean, byRunMean } from "../src/sim/stats.ts";
import { PUBLISHED } from "./paper-published.ts";
import type { PaperRow, RunsResult } from "./paper-runs.ts";

/** An average reproduces the paper's within 25%, a ratio within 0.08 (issue 15). */
export const AVERAGE_TOLERANCE = 0.25;
export const RATIO_TOLERANCE = 0.08;
/** Issue 15: the best market policy at most 0.85 x the paper's E-Mosix. */
const BEAT = 0.85;

export interface Summary {
  slowdownByJob: number;
  slowdownByRun: number;
  ci95ByJob: [number, number];
  ci95ByRun: [number, number];
  thrashing: number;
}

/** One published figure beside ours. */
export interface FigureRow {
  figure: string;
  paper: number;
  ours: number;
  ci95?: [number, number];
  reproduces: boolean;
}

export function summarizeProfile(res: RunsResult, extra: readonly PaperRow[], also: readonly string[], bandCount: number) {
  const runs = res.offeredLoad.length;
  const summarize = (key: string): Summary => {
    const b = res.byPolicy[key]!;
    const j = byJobMean(b.slowdownSum, b.completed);
    const r = byRunMean(b.slowdownMean);
    const thrashing = b.thrashShare.reduce((a, x) => a + x, 0) / b.thrashShare.length;
    return { slowdownByJob: j.mean, slowdownByRun: r.mean, ci95ByJob: j.ci95, ci95ByRun: r.ci95, thrashing };
  };
  const policies = Object.fromEntries(PAPER_POLICY_NAMES.map((n) => [n, { ...summarize(n), paper: PUBLISHED[n] }])) as Record<PaperPolicyName, Summary & { paper: { byJob: number; byRun: number } }>;
  const variants = Object.fromEntries(extra.map((v) => [v.key, summarize(v.key)]));
  const byJob = (key: string): number => (policies[key as PaperPolicyName] ?? variants[key]!).slowdownByJob;
  const paperRatio = { "e-pvm/pvm": PUBLISHED["e-pvm"].byJob / PUBLISHED.pvm.byJob, "e-mosix/mosix": PUBLISHED["e-mosix"].byJob / PUBLISHED.mosix.byJob };
  const ratios: Record<string, number> = { "e-pvm/pvm": byJob("e-pvm") / byJob("pvm"), "e-mosix/mosix": byJob("e-mosix") / byJob("mosix") };
  for (const v of extra) if (v.name === "mosix") ratios[`e-mosix/${v.key}`] = byJob("e-mosix") / byJob(v.key);

  const label: Record<PaperPolicyName, string> = { pvm: "PVM", "e-pvm": "E-PVM", mosix: "Mosix", "e-mosix": "E-Mosix" };
  const within = (ours: number, paper: number): boolean => Math.abs(ours / paper - 1) <= AVERAGE_TOLERANCE;
  const figures: FigureRow[] = PAPER_POLICY_NAMES.flatMap((n) => {
    const p = policies[n];
    return [
      { figure: `${label[n]} by job`, paper: p.paper.byJob, ours: p.slowdownByJob, ci95: p.ci95ByJob, reproduces: within(p.slowdownByJob, p.paper.byJob) },
      { figure: `${label[n]} by run`, paper: p.paper.byRun, ours: p.slowdownByRun, ci95: p.ci95ByRun, reproduces: within(p.slowdownByRun, p.paper.byRun) },
    ];
  });
  const ratioRow = (figure: string, paper: number, ours: number): FigureRow => ({ figure, paper, ours, reproduces: Math.abs(ours - paper) <= RATIO_TOLERANCE });
  figures.push(ratioRow("E-PVM / PVM", paperRatio["e-pvm/pvm"], ratios["e-pvm/pvm"]!), ratioRow("E-Mosix / Mosix", paperRatio["e-mosix/mosix"], ratios["e-mosix/mosix"]!));
  for (const v of extra) if (v.name === "mosix") figures.push(ratioRow(`E-Mosix / ${v.label ?? v.key}`, paperRatio["e-mosix/mosix"], ratios[`e-mosix/${v.key}`]!));

  const market = Object.fromEntries(also.map((n) => [n, summarize(`market:${n}`)]));
  const bestName = also.reduce<string | undefined>((b, n) => (b === undefined || market[n]!.slowdownByJob < market[b]!.slowdownByJob ? n : b), undefined);
  const best = bestName === undefined ? undefined : {
    policy: bestName,
    slowdownByJob: market[bestName]!.slowdownByJob,
    slowdownByRun: market[bestName]!.slowdownByRun,
    overPaperEMosix: market[bestName]!.slowdownByJob / policies["e-mosix"].slowdownByJob,
    target: BEAT,
  };

  // Bands of equal run counts by offered load (the paper's "pyramid": gains grow with load).
  const order = res.offeredLoad.map((_, i) => i).sort((a, b) => res.offeredLoad[a]! - res.offeredLoad[b]!);
  const keys = [...PAPER_POLICY_NAMES, ...extra.map((v) => v.key), ...also.map((n) => `market:${n}`)];
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

  const offeredLoad = res.offeredLoad.reduce((a, x) => a + x, 0) / Math.max(1, runs);
  return { offeredLoad, policies, variants, ratios: { ...ratios, paper: paperRatio }, figures, market, best, loadBands };
}

export type ProfileSummary = ReturnType<typeof summarizeProfile>;
