// npx tsx packages/costbenefit/bench/paper-search.ts --points P --runs N [--seed S] [--min-load X]
// A random search over the `paper` profile's workload constants (the arrival rate range, batch
// share, size and CPU factor, the two heavy-tail caps), each point scored by measure() on N runs:
// the worst miss of the eight published averages (as a share of 25%) and of the two ratios (as a
// share of 0.08). Prints one JSON line per point, best first at the end; points whose offered load
// is under --min-load are skipped, to look for the most loaded workload that meets the targets.
import { createRng } from "../src/index.ts";
import { CALIBRATED_PROFILE, withOverrides, type Overrides } from "../src/paper/profile.ts";
import { intArg, parseArgs } from "./args.ts";
import { measure } from "./paper-sweep.ts";

const args = parseArgs(process.argv.slice(2));
const points = intArg(args, "points", 50);
const runs = intArg(args, "runs", 24);
const seed = intArg(args, "seed", 1);
const minLoad = typeof args["min-load"] === "string" ? Number(args["min-load"]) : 0;
const rng = createRng(`search/${intArg(args, "search-seed", 1)}`);
const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
const round = (x: number, d = 3): number => Number(x.toFixed(d));

const found: { score: number; load: number; o: Overrides; line: string }[] = [];
for (let i = 0; i < points; i++) {
  const lo = round(rng.uniform(0.015, 0.12), 4);
  const o: Overrides = {
    workload: {
      jobRate: [lo, round(lo * rng.uniform(1, 1.6), 4)],
      batchFraction: pick([0.05, 0.1, 0.2, 0.3, 0.5]),
      batchMax: 20 + rng.int(81),
      batchCpuFactor: pick([1, 1, 2, 3, 5, 10]),
      mMin: round(rng.uniform(0.08, 0.25)),
      rMin: pick([0.02, 0.05]),
    },
  };
  const f = measure(withOverrides(CALIBRATED_PROFILE, o), runs, seed, 0, 0.6);
  if (f.offeredLoad < minLoad) continue;
  const score = Number.isNaN(f.worstAverage) ? Infinity : Math.max(f.worstAverage / 0.25, f.worstRatio / 0.08);
  const p = f.policies;
  const line = `${score.toFixed(2)} load ${f.offeredLoad.toFixed(3)} pvm ${p.pvm.byJob.toFixed(2)}/${p.pvm.byRun.toFixed(2)} epvm ${p["e-pvm"].byJob.toFixed(2)}/${p["e-pvm"].byRun.toFixed(2)} mosix ${p.mosix.byJob.toFixed(2)}/${p.mosix.byRun.toFixed(2)} emosix ${p["e-mosix"].byJob.toFixed(2)}/${p["e-mosix"].byRun.toFixed(2)} r ${f.ratios.ePvmPvm.toFixed(3)} ${f.ratios.eMosixMosix.toFixed(3)} ${JSON.stringify(o)}`;
  console.log(line);
  found.push({ score, load: f.offeredLoad, o, line });
}
found.sort((a, b) => a.score - b.score);
console.log("\nbest:");
for (const f of found.slice(0, 10)) console.log(f.line);
