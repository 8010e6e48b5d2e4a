// The benefit workload of issue 3: the TPDS 2000 machines and demands, each job with a benefit
// curve drawn per job, at a chosen offered load (1 = arrivals bring as much work per second as
// the cluster can do).
import type { BenefitCurve } from "../../benefit.ts";
import { defaultPriceConstant } from "../../cost.ts";
import type { Job } from "../../job.ts";
import type { Rng } from "../../rng.ts";
import type { Workload } from "../simulator.ts";
import { TPDS2000_DEFAULTS, tpds2000Arrivals, tpds2000Machines, type Tpds2000Options } from "./tpds2000.ts";

/**
 * Credits per second a speed-1 producer asks: the Node worker's default `--price`. At 0.2 (a
 * tenth to a half of what a work unit is worth to its consumer) the producers' pay was a third of
 * what consumers were charged under posted prices, and a policy that ignores the asks lost nothing
 * by it; at 1 it is a real cost some jobs are not worth, producers receive more than half of the
 * charges at 1x load, and weighing asks against benefits decides welfare (README "Pricing rules"
 * has the sweep).
 */
export const PRICE_PER_SPEED = 1;
/**
 * The compute maximum H of the benefit workload, in seconds of backlog per machine. Chosen from
 * the sweep in README ("bench:benefit", H = 30 to 180): at 30 s two thirds of the batch jobs are
 * longer than H on the fastest machine, so the cost n^(w/(vH)) prices them out even on an idle
 * cluster and miserly leaves profitable work undone at light load; 120 s is the smallest H at
 * which it no longer does, and it keeps its lead at 3x overload.
 */
export const BENEFIT_HORIZON = 120;

/** Mean work per arrival of the TPDS 2000 mix (batches included), in work units. */
export function meanWorkPerArrival(o: Tpds2000Options): number {
  const single = (2 * Math.log(1 / o.rMin)) / (1 - o.rMin);
  return (1 - o.batchFraction) * single + o.batchFraction * ((1 + o.batchMax) / 2) * o.batchCpuFactor * single;
}

/**
 * Curves: 40% deadline (value until a deadline a few times the job's length, then a penalty of a
 * fifth of the value), 40% linear decay (full value for 1.5-3 lengths, down to minus a fifth over
 * 3-10 more), 20% constant. Values are 0.5-2.5 credits per work unit, i.e. 2.5-12.5 times what
 * the producers ask, so a job pays when it is served reasonably fast.
 */
export function drawCurve(rng: Rng, work: number): BenefitCurve {
  const value = work * rng.uniform(0.5, 2.5);
  const kind = rng.next();
  if (kind < 0.4) return { kind: "deadline", value, deadline: 5 + work * rng.uniform(2, 6), penalty: -0.2 * value };
  if (kind < 0.8) {
    const start = work * rng.uniform(1.5, 3);
    return { kind: "linear-decay", value, start, end: start + work * rng.uniform(3, 10), floor: -0.2 * value };
  }
  return { kind: "constant", value };
}

export function benefitWorkload(rng: Rng, load: number, options: Partial<Tpds2000Options> = {}, horizonSeconds = BENEFIT_HORIZON, pricePerSpeed = PRICE_PER_SPEED): Workload {
  const o = { ...TPDS2000_DEFAULTS, ...options };
  const machines = tpds2000Machines(pricePerSpeed);
  const capacity = machines.reduce((a, m) => a + m.speed * m.slots, 0);
  const interarrival = meanWorkPerArrival(o) / (load * capacity);
  const jobs: Job[] = tpds2000Arrivals(rng, o, interarrival).map((j, i) => ({
    id: `j${i}`, arrivedAt: j.arrivedAt, replicas: 1, benefit: drawCurve(rng, j.work),
    tasks: [{ id: `j${i}.0`, work: j.work, memoryMb: j.memoryMb, bytes: 0 }],
  }));
  const prices = machines.map((m) => (m.kind === "opportunistic" ? m.pricePerSecond : 0));
  return {
    name: "benefit",
    machines,
    jobs,
    settings: { horizonSeconds, priceConstant: defaultPriceConstant(prices, horizonSeconds), linkBytesPerSecond: 1e12, maxDelaySeconds: 600 },
  };
}
