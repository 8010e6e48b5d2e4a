// npm run -s bench:benefit -- --runs N --seed S [--policies a,b] [--horizon H] [--fee F] [--ask A] [--workers K] [--json]
// Every policy under both pricing rules (posted prices and the paper's pay-as-bid), light load to
// 3x overload: what consumers were charged and kept, what producers earned, what the market kept,
// and the welfare (benefit delivered minus producer payments).
import { isPolicyName, MarketSettings } from "../src/index.ts";
import type { SimResult } from "../src/sim/simulator.ts";
import { BENEFIT_HORIZON, PRICE_PER_SPEED } from "../src/sim/workloads/benefit.ts";
import { intArg, parseArgs, table } from "./args.ts";
import { defaultWorkers, PRICING, runAll, serveRuns, type Pricing, type RunSpec } from "./benefit-runs.ts";

const args = parseArgs(process.argv.slice(2));

interface Row {
  marketProfit: number; consumerCharged: number; consumerSurplus: number; producerIncome: number; welfare: number;
  admitted: number; delayed: number; rejected: number;
  consumerBenefit: number; benefitPerAdmittedJob: number; slowdownByJob: number; jobs: number; completed: number;
}

/** Which simulator figure each column averages (benefitPerAdmittedJob is derived after). */
const FROM: Record<Exclude<keyof Row, "benefitPerAdmittedJob">, keyof SimResult> = {
  marketProfit: "marketProfit", consumerCharged: "charged", consumerSurplus: "consumerSurplus", producerIncome: "payments", welfare: "welfare",
  admitted: "admitted", delayed: "delayed", rejected: "rejected", consumerBenefit: "benefit", slowdownByJob: "slowdownMean", jobs: "jobs", completed: "completed",
};

function add(a: Row | undefined, r: SimResult, runs: number): Row {
  const o = a ?? ({ benefitPerAdmittedJob: 0 } as Row);
  for (const [k, f] of Object.entries(FROM) as [keyof typeof FROM, keyof SimResult][]) o[k] = (o[k] ?? 0) + r[f] / runs;
  return o;
}

async function main(): Promise<void> {
  const runs = intArg(args, "runs", 6);
  const seed = intArg(args, "seed", 1);
  const json = args.json === true;
  const loads = [0.5, 1, 1.5, 2, 3];
  // --horizon H: the compute maximum in seconds (default BENEFIT_HORIZON; README has the sweep).
  const horizon = intArg(args, "horizon", BENEFIT_HORIZON);
  if (horizon < 1) throw new Error("--horizon must be at least 1 second");
  const workers = intArg(args, "workers", defaultWorkers());
  // --fee F: the market's fee under posted prices (default the settings' 10%).
  const feeFraction = typeof args.fee === "string" ? Number(args.fee) : undefined;
  if (feeFraction !== undefined && !(feeFraction >= 0 && feeFraction <= 10)) throw new Error("--fee must be between 0 and 10");
  // --ask A: credits per second a speed-1 producer asks (default PRICE_PER_SPEED); P follows it.
  const ask = typeof args.ask === "string" ? Number(args.ask) : PRICE_PER_SPEED;
  if (!(ask >= 0)) throw new Error("--ask must be a non-negative number");
  // --policies a,b,...: which policies to run (default: these, the share policies included).
  const names = typeof args.policies === "string" ? args.policies.split(",") : ["miserly", "fcfs", "e-pvm", "mosix", "tickets", "opportunity-cost", "continuous-bid", "reservation"];
  for (const n of names) if (!isPolicyName(n)) throw new Error(`--policies: unknown policy ${n}`);

  const started = performance.now();
  // Heaviest loads first, so the last runs handed out are short ones.
  const specs: RunSpec[] = loads.flatMap((load) => Array.from({ length: runs }, (_, run) => ({ seed, load, run, horizon, names, feeFraction, ask }))).reverse();
  const results = await runAll(process.argv[1]!, specs, workers);
  const levels = loads.map((load) => {
    const pricing = { posted: {}, bid: {} } as Record<Pricing, Record<string, Row>>;
    specs.forEach((s, i) => {
      if (s.load !== load) return;
      for (const p of PRICING) for (const n of names) pricing[p][n] = add(pricing[p][n], results[i]![p][n]!, runs);
    });
    for (const p of PRICING) for (const r of Object.values(pricing[p])) r.benefitPerAdmittedJob = r.admitted > 0 ? r.consumerBenefit / r.admitted : 0;
    return { load, pricing };
  });
  const seconds = (performance.now() - started) / 1000;

  if (json) {
    console.log(JSON.stringify({ workload: "benefit", runs, seed, horizonSeconds: horizon, pricePerSpeed: ask, feeFraction: feeFraction ?? MarketSettings.parse({}).feeFraction, seconds, levels }));
    return;
  }
  console.log(`benefit workload: ${runs} runs per load level, seed ${seed}, H = ${horizon} s, producers ask ${ask} credits/s at speed 1, ${workers} workers, ${seconds.toFixed(1)} s (means per run)\n`);
  const rows: (string | number)[][] = [["load", "pricing", "policy", "welfare", "consumer charged", "consumer surplus", "producer income", "market profit", "producers/charged", "slowdown", "admitted", "delayed", "rejected"]];
  for (const l of levels) {
    for (const p of PRICING) {
      for (const n of names) {
        const r = l.pricing[p][n]!;
        rows.push([`${l.load}x`, p, n, r.welfare, r.consumerCharged, r.consumerSurplus, r.producerIncome, r.marketProfit, r.consumerCharged > 0 ? r.producerIncome / r.consumerCharged : 0, r.slowdownByJob, r.admitted, r.delayed, r.rejected]);
      }
    }
  }
  console.log(table(rows));
}

if (args.worker === true) serveRuns();
else await main();
