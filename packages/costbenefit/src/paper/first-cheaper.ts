// E-Mosix (TPDS 2000; the Java Market paper section 6): E-PVM's placement, and every X seconds each machine
// offers each of its jobs to a small random set of machines; the job moves to the first of them
// whose marginal cost for it is below what it costs where it is.
import type { Rng } from "../rng.ts";
import { LmaxTracker, leastCostMachine } from "./least-cost.ts";
import { currentCost, marginalCost, type CpuLoad } from "./paper-cost.ts";
import { cpuLoadOf, loadOf, randomOthers, type ClusterView, type PaperPolicy, type TickContext } from "./paper-policy.ts";

export interface EMosixParameters {
  /** X: seconds between offer rounds. */
  intervalSeconds: number;
  /** Machines each job is offered to per round. */
  offerSet: number;
}

/**
 * Below this relative difference the costs are equal. A machine holding one job more than another
 * with the same memory costs the job exactly what the other would charge it; computed two ways,
 * the two can differ in the last bit, and the job would move and the next offer move one back.
 */
const TIE = 1e-9;

/**
 * One offer round. Machines in order, each job on a machine in the order it holds them; every
 * move is applied before the next offer, so later offers see it. Returns the number of moves.
 */
export function offerRound(c: ClusterView, ctx: TickContext, lmax: LmaxTracker, offerSet: number, n: number, rng: Rng, cpu: CpuLoad = "jobs"): number {
  let moves = 0;
  const set: number[] = [];
  for (let m = 0; m < c.speed.length; m++) {
    for (const task of [...c.tasks[m]!]) {
      if (!ctx.movable(task)) continue;
      const mem = c.taskMemory[task]!;
      const here = currentCost(loadOf(c, m, cpu), mem, lmax.value, n);
      const k = randomOthers(c.speed.length, m, offerSet, rng, set);
      for (let i = 0; i < k; i++) {
        const t = set[i]!;
        if (marginalCost(loadOf(c, t, cpu), mem, lmax.value, n) < here * (1 - TIE)) {
          ctx.move(task, t);
          lmax.see(cpuLoadOf(c, t, cpu));
          moves++;
          break;
        }
      }
    }
  }
  return moves;
}

export function createEMosix(p: EMosixParameters, n: number, cpu: CpuLoad = "jobs"): PaperPolicy {
  const lmax = new LmaxTracker();
  return {
    name: "e-mosix",
    tickSeconds: p.intervalSeconds,
    place(c, memoryMb) {
      const m = leastCostMachine(c, memoryMb, lmax.value, n, cpu);
      lmax.see(cpuLoadOf(c, m, cpu, 1));
      return m;
    },
    tick(c, ctx, rng) {
      offerRound(c, ctx, lmax, p.offerSet, n, rng, cpu);
    },
  };
}
