// The cost of a machine in the TPDS 2000 paper (Amir, Awerbuch, Barak, Borgstrom, Keren; the Java Market paper
// section 6): C = n^(memory used / memory) + n^(jobs / L_max). Unlike the market's cost
// (cost.ts), CPU usage is the number of jobs on the machine, not a backlog in seconds, and
// memory may pass 1: a machine over its memory is expensive, never excluded.

/** The paper's n: the number of machines in its cluster. */
export const PAPER_N = 6;

/**
 * A machine as the cost sees it: jobs on it, memory they hold, its memory, and the speed its CPU
 * load is counted in (1: jobs; the machine's speed: jobs per unit of speed, see `CpuLoad`).
 */
export interface MachineLoad {
  jobs: number;
  memoryUsedMb: number;
  memoryMb: number;
  speed?: number;
}

/**
 * How the cost counts a machine's CPU load: the number of jobs, or the jobs divided by the
 * machine's speed (its load relative to its capacity, as the paper's related-machines model
 * has it: a job adds 1/speed).
 */
export type CpuLoad = "jobs" | "jobs-per-speed";

/**
 * L_max after a machine has been seen with `load` jobs: it starts at 1 and doubles while the load
 * exceeds it (the paper guesses the optimum's maximum load by doubling, after its reference [6]),
 * so it is always the smallest power of two at or above the largest load seen.
 */
export function nextLmax(lmax: number, load: number): number {
  let l = lmax;
  while (load > l) l *= 2;
  return l;
}

/** C = n^(memory used / memory) + n^(jobs / L_max). */
export function machineCost(m: MachineLoad, lmax: number, n = PAPER_N): number {
  return Math.pow(n, m.memoryUsedMb / m.memoryMb) + Math.pow(n, m.jobs / ((m.speed ?? 1) * lmax));
}

/**
 * What one more job of `memoryMb` adds to the machine's cost (E-PVM's placement criterion):
 * C(after) - C(before), written as n^(u/max) x (n^(d/max) - 1) per term, one exp and one expm1
 * each instead of two powers (offer rounds call it for every job every X seconds).
 */
export function marginalCost(m: MachineLoad, memoryMb: number, lmax: number, n = PAPER_N): number {
  const a = Math.log(n);
  const l = (m.speed ?? 1) * lmax;
  return Math.exp((a * m.memoryUsedMb) / m.memoryMb) * Math.expm1((a * memoryMb) / m.memoryMb) + Math.exp((a * m.jobs) / l) * Math.expm1(a / l);
}

/**
 * What a job already on the machine costs there: the machine's cost with it minus without it
 * (E-Mosix compares this with the marginal cost elsewhere).
 */
export function currentCost(m: MachineLoad, memoryMb: number, lmax: number, n = PAPER_N): number {
  const a = Math.log(n);
  const l = (m.speed ?? 1) * lmax;
  return -Math.exp((a * m.memoryUsedMb) / m.memoryMb) * Math.expm1((-a * memoryMb) / m.memoryMb) - Math.exp((a * m.jobs) / l) * Math.expm1(-a / l);
}
