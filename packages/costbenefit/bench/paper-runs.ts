// The runs behind `bench:policies --profile paper`: runs [from, to) of one seed, every paper policy
// and every market policy asked for on the same jobs. Runs in a worker thread when started as one.
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { createPolicy, createRng, type PolicyName } from "../src/index.ts";
import { createPaperPolicy } from "../src/paper/create.ts";
import type { PaperPolicyName } from "../src/paper/paper-policy.ts";
import { withOverrides, type Overrides, type PaperProfile } from "../src/paper/profile.ts";
import { simulatePaper } from "../src/paper/simulator.ts";
import { paperRun } from "../src/paper/workload.ts";
import { simulate } from "../src/sim/simulator.ts";

export interface RunsRequest {
  seed: number;
  from: number;
  to: number;
  profile: PaperProfile;
  paper: PaperRow[];
  market: PolicyName[];
}

/** One paper policy to run, under `key`, with the profile changed by `overrides` (e.g. Mosix every 1 s). */
export interface PaperRow {
  key: string;
  /** How the bench names the row, e.g. "Mosix every 1 s". */
  label?: string;
  name: PaperPolicyName;
  overrides?: Overrides;
}

/** Per run, in run order: offered load, and per policy (paper rows' keys, then `market:<name>`) the run's sums. */
export interface RunsResult {
  offeredLoad: number[];
  byPolicy: Record<string, { slowdownSum: number[]; completed: number[]; slowdownMean: number[]; thrashShare: number[] }>;
}

export function runRange(req: RunsRequest): RunsResult {
  const out: RunsResult = { offeredLoad: [], byPolicy: {} };
  const push = (key: string, sum: number, n: number, mean: number, thrash: number): void => {
    const b = (out.byPolicy[key] ??= { slowdownSum: [], completed: [], slowdownMean: [], thrashShare: [] });
    b.slowdownSum.push(sum);
    b.completed.push(n);
    b.slowdownMean.push(mean);
    b.thrashShare.push(thrash);
  };
  for (let r = req.from; r < req.to; r++) {
    const run = paperRun(createRng(req.seed).fork(`workload/${r}`), req.profile);
    out.offeredLoad.push(run.offeredLoad);
    const machineSeconds = (span: number): number => run.machines.length * Math.max(1, span);
    for (const row of req.paper) {
      const profile = row.overrides ? withOverrides(req.profile, row.overrides) : req.profile;
      const res = simulatePaper(createPaperPolicy(row.name, profile), run.machines, run.jobs, createRng(req.seed).fork(`policy/${r}`), profile.migration);
      push(row.key, res.slowdownSum, res.completed, res.slowdownMean, res.thrashSeconds / machineSeconds(res.makespan));
    }
    for (const name of req.market) {
      const res = simulate(createPolicy(name), run.market, createRng(req.seed).fork(`policy/${r}`));
      push(`market:${name}`, res.slowdownSum, res.completed, res.slowdownMean, res.thrashSeconds / machineSeconds(res.makespan));
    }
  }
  return out;
}

if (!isMainThread && parentPort) parentPort.postMessage(runRange(workerData as RunsRequest));
