// npm run -s bench:benefit -- --runs N --seed S [--policies a,b] [--horizon H] [--json]
// Market profit and consumer benefit of miserly vs admit-all policies, light load to 3x overload.
import { createPolicy, createRng, isPolicyName } from "../src/index.ts";
import { simulate } from "../src/sim/simulator.ts";
import { BENEFIT_HORIZON, benefitWorkload } from "../src/sim/workloads/benefit.ts";
import { intArg, parseArgs, table } from "./args.ts";

const args = parseArgs(process.argv.slice(2));
const runs = intArg(args, "runs", 20);
const seed = intArg(args, "seed", 1);
const json = args.json === true;
const loads = [0.5, 1, 1.5, 2, 3];
// --horizon H: the compute maximum in seconds (default BENEFIT_HORIZON; README has the sweep).
const horizon = intArg(args, "horizon", BENEFIT_HORIZON);
if (horizon < 1) throw new Error("--horizon must be at least 1 second");
// --policies a,b,...: which policies to run (default: these, the share policies included).
const names = typeof args.policies === "string" ? args.policies.split(",") : ["miserly", "fcfs", "e-pvm", "mosix", "tickets", "opportunity-cost", "continuous-bid", "reservation"];
for (const n of names) if (!isPolicyName(n)) throw new Error(`--policies: unknown policy ${n}`);

interface Row { marketProfit: number; consumerBenefit: number; benefitPerAdmittedJob: number; producerPayments: number; slowdownByJob: number; jobs: number; admitted: number; delayed: number; rejected: number }
const levels: { load: number; policies: Record<string, Row> }[] = [];
const started = performance.now();
for (const load of loads) {
  const acc: Record<string, Row> = {};
  for (let r = 0; r < runs; r++) {
    const w = benefitWorkload(createRng(seed).fork(`benefit/${load}/${r}`), load, {}, horizon);
    for (const name of names) {
      const res = simulate(createPolicy(name), w, createRng(seed).fork(`policy/${load}/${r}`));
      const a = (acc[name] ??= { marketProfit: 0, consumerBenefit: 0, benefitPerAdmittedJob: 0, producerPayments: 0, slowdownByJob: 0, jobs: 0, admitted: 0, delayed: 0, rejected: 0 });
      a.marketProfit += res.profit / runs;
      a.consumerBenefit += res.benefit / runs;
      a.producerPayments += res.payments / runs;
      a.slowdownByJob += res.slowdownMean / runs;
      a.jobs += res.jobs / runs;
      a.admitted += res.admitted / runs;
      a.delayed += res.delayed / runs;
      a.rejected += res.rejected / runs;
    }
  }
  for (const a of Object.values(acc)) a.benefitPerAdmittedJob = a.admitted > 0 ? a.consumerBenefit / a.admitted : 0;
  levels.push({ load, policies: acc });
  if (!json) process.stderr.write(`  load ${load}x done\n`);
}

if (json) {
  console.log(JSON.stringify({ workload: "benefit", runs, seed, horizonSeconds: horizon, levels }));
} else {
  console.log(`benefit workload: ${runs} runs per load level, seed ${seed}, H = ${horizon} s, ${((performance.now() - started) / 1000).toFixed(1)} s (means per run)\n`);
  const rows: (string | number)[][] = [["load", "policy", "market profit", "consumer benefit", "benefit/admitted job", "producer payments", "slowdown", "jobs", "admitted", "delayed", "rejected"]];
  for (const l of levels) {
    for (const name of names) {
      const p = l.policies[name]!;
      rows.push([`${l.load}x`, name, p.marketProfit, p.consumerBenefit, p.benefitPerAdmittedJob, p.producerPayments, p.slowdownByJob, p.jobs, p.admitted, p.delayed, p.rejected]);
    }
  }
  console.log(table(rows));
}
