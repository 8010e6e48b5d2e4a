// One run of the benefit workload at one load level: every policy under both pricing rules, and
// a pool of child processes that share the runs out (one per core).
import { fork } from "node:child_process";
import { cpus } from "node:os";
import { createPolicy, createRng } from "../src/index.ts";
import { simulate, type SimResult } from "../src/sim/simulator.ts";
import { benefitWorkload } from "../src/sim/workloads/benefit.ts";

export const PRICING = ["posted", "bid"] as const;
export type Pricing = (typeof PRICING)[number];

export interface RunSpec { seed: number; load: number; run: number; horizon: number; names: string[]; feeFraction?: number; ask?: number }
/** Per pricing rule, per policy: the simulator's result for one run. */
export type RunResult = Record<Pricing, Record<string, SimResult>>;

/**
 * Only miserly admission reads the pricing rule (it maximises b - (1 + fee) cost under posted
 * prices, b - cost under bid); every other policy places and admits the same jobs either way and
 * only the settlement differs. Their pay-as-bid run is therefore the posted run settled at b(j, t):
 * the charge is the benefit, the consumer keeps nothing. sim.test.ts checks the equivalence.
 */
export function readsPricing(name: string): boolean {
  return createPolicy(name).profile.admission === "miserly";
}

export function settledAtBid(r: SimResult): SimResult {
  return { ...r, charged: r.benefit, marketProfit: r.benefit - r.payments, consumerSurplus: 0 };
}

export function runOnce(s: RunSpec): RunResult {
  const w = benefitWorkload(createRng(s.seed).fork(`benefit/${s.load}/${s.run}`), s.load, {}, s.horizon, s.ask);
  const out: RunResult = { posted: {}, bid: {} };
  for (const name of s.names) {
    const sim = (pricing: Pricing) => simulate(createPolicy(name), { ...w, settings: { ...w.settings, pricing, ...(s.feeFraction === undefined ? {} : { feeFraction: s.feeFraction }) } }, createRng(s.seed).fork(`policy/${s.load}/${s.run}`));
    out.posted[name] = sim("posted");
    out.bid[name] = readsPricing(name) ? sim("bid") : settledAtBid(out.posted[name]);
  }
  return out;
}

/** Runs the specs on `workers` child processes of this same script (started with `--worker`). */
export async function runAll(script: string, specs: RunSpec[], workers: number): Promise<RunResult[]> {
  const results: RunResult[] = new Array(specs.length);
  if (workers <= 1) return specs.map(runOnce);
  let next = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const child = fork(script, ["--worker"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
      const feed = () => {
        if (next >= specs.length) return child.send({ done: true });
        const i = next++;
        child.send({ i, spec: specs[i] });
      };
      child.on("message", (m: { i: number; result: RunResult }) => {
        results[m.i] = m.result;
        feed();
      });
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`bench worker exited with ${code}`))));
      feed();
    });
  await Promise.all(Array.from({ length: Math.min(workers, specs.length) }, one));
  return results;
}

/** The child's side of runAll: answer each spec until told it is done. */
export function serveRuns(): void {
  process.on("message", (m: { done?: true; i: number; spec: RunSpec }) => {
    if (m.done) process.exit(0);
    process.send!({ i: m.i, result: runOnce(m.spec) });
  });
}

export const defaultWorkers = (): number => Math.max(1, Math.min(cpus().length, 8));
