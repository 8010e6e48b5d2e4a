// The workload of Amir, Awerbuch, Barak, Borgstrom and Keren (IEEE TPDS 2000), as issue 3 states
// it: the cluster behind the Java Market paper section 6 (E-PVM vs PVM, E-Mosix vs Mosix).
import { MAX_CREDITS, type BenefitCurve } from "../../benefit.ts";
import type { Job } from "../../job.ts";
import type { MachineProfileInput } from "../../machine.ts";
import type { Rng } from "../../rng.ts";
import type { Workload } from "../simulator.ts";

export interface Tpds2000Options {
  /** Arrivals stop after this many simulated seconds; all admitted jobs then run to completion. */
  durationSeconds: number;
  /**
   * Jobs per second (members of a batch counted one by one), drawn per run uniformly in this
   * range so runs cover light to heavy load. The paper's runs averaged one job per 10 s.
   */
  jobRate: [number, number];
  /**
   * Heavy-tail caps. CPU demand is 2/r seconds with r uniform on (0, 1]: we draw r on
   * [rMin, 1], so demand is at most 2/rMin seconds (40 s at 0.05, 400 s for a batch job). Memory
   * is (1/m)% of the largest memory with m on (0, 1]: we draw m on [mMin, 1], so at most 20% of
   * it (12.8 MB) at 0.05. Uncapped (0.01 or below) single jobs fill a whole machine and every
   * policy spends most of the run thrashing, which says nothing about placement.
   */
  rMin: number;
  mMin: number;
  /** Share of arrivals that are batches of 1..batchMax jobs each with batchCpuFactor x the CPU. */
  batchFraction: number;
  batchMax: number;
  batchCpuFactor: number;
  /** Opportunistic price per second at speed 1 (0 in the paper, which had no money). */
  pricePerSpeed: number;
  /**
   * Guess the compute maximum H online (from 30 s up, see Workload) rather than fixing it at 30 s:
   * with a fixed H the compute term dwarfs memory once backlogs pass a few H, and E-PVM places
   * work past a machine's memory (README, "Results").
   */
  adaptiveHorizon: boolean;
}

export const TPDS2000_DEFAULTS: Tpds2000Options = {
  durationSeconds: 10_000,
  jobRate: [0.05, 0.15],
  rMin: 0.05,
  mMin: 0.05,
  batchFraction: 0.05,
  batchMax: 20,
  batchCpuFactor: 10,
  pricePerSpeed: 0,
  adaptiveHorizon: true,
};

/** 3 at 200 MHz with 64 MB, 2 at 133 MHz with 32 MB, 1 at 90 MHz with 24 MB; speed 1 = 200 MHz. */
export function tpds2000Machines(pricePerSpeed = 0): MachineProfileInput[] {
  const spec: Array<[number, number]> = [[200, 64], [200, 64], [200, 64], [133, 32], [133, 32], [90, 24]];
  return spec.map(([mhz, mb], i) => ({
    id: `m${i}`, kind: "opportunistic", slots: 1, speed: mhz / 200, memoryPerSlotMb: mb,
    bandwidthBytesPerSecond: 1e9, pricePerSecond: (pricePerSpeed * mhz) / 200, reputation: 1,
  }));
}

export interface RawJob {
  arrivedAt: number;
  work: number;
  memoryMb: number;
}

/** Arrival times and demands only; the benefit is chosen by the caller. */
export function tpds2000Arrivals(rng: Rng, o: Tpds2000Options, meanInterarrival: number): RawJob[] {
  const out: RawJob[] = [];
  const largest = 64;
  const draw = (factor: number, t: number): void => {
    const r = o.rMin + (1 - o.rMin) * (1 - rng.next());
    const m = o.mMin + (1 - o.mMin) * (1 - rng.next());
    out.push({ arrivedAt: t, work: (factor * 2) / r, memoryMb: (largest * (1 / m)) / 100 });
  };
  for (let t = rng.exponential(1 / meanInterarrival); t < o.durationSeconds; t += rng.exponential(1 / meanInterarrival)) {
    if (rng.next() < o.batchFraction) {
      const k = 1 + rng.int(o.batchMax);
      for (let i = 0; i < k; i++) draw(o.batchCpuFactor, t);
    } else draw(1, t);
  }
  return out;
}

/** The slowdown study: no money, so every job has a benefit high enough to always be admitted. */
export function tpds2000(rng: Rng, options: Partial<Tpds2000Options> = {}): Workload & { meanInterarrival: number } {
  const o = { ...TPDS2000_DEFAULTS, ...options };
  // Arrivals are Poisson; an arrival brings 1 + batchFraction x (mean batch size - 1) jobs.
  const jobsPerArrival = 1 - o.batchFraction + o.batchFraction * ((1 + o.batchMax) / 2);
  const meanInterarrival = jobsPerArrival / rng.uniform(o.jobRate[0], o.jobRate[1]);
  const benefit: BenefitCurve = { kind: "constant", value: MAX_CREDITS };
  const jobs: Job[] = tpds2000Arrivals(rng, o, meanInterarrival).map((j, i) => ({
    id: `j${i}`, arrivedAt: j.arrivedAt, replicas: 1, benefit,
    tasks: [{ id: `j${i}.0`, work: j.work, memoryMb: j.memoryMb, bytes: 0 }],
  }));
  return {
    name: "tpds2000",
    machines: tpds2000Machines(o.pricePerSpeed),
    jobs,
    // H = 30 s: a few typical jobs' worth of backlog per machine (see README for the sweep).
    settings: { horizonSeconds: 30, priceConstant: 1, linkBytesPerSecond: 1e12, maxDelaySeconds: 1e6 },
    meanInterarrival,
    adaptiveHorizon: o.adaptiveHorizon,
  };
}
