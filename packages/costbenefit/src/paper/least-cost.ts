// E-PVM (TPDS 2000; the Java Market paper section 6): each arriving job goes to the machine where it adds the
// least to C = n^(memory used / memory) + n^(jobs / L_max), and never moves.
import { marginalCost, nextLmax, type CpuLoad } from "./paper-cost.ts";
import { cpuLoadOf, loadOf, type ClusterView, type PaperPolicy } from "./paper-policy.ts";

/** The machine of least marginal cost for a job of `memoryMb`; the first one on a tie. */
export function leastCostMachine(c: ClusterView, memoryMb: number, lmax: number, n: number, cpu: CpuLoad = "jobs"): number {
  let best = 0;
  let bestCost = Infinity;
  for (let m = 0; m < c.speed.length; m++) {
    const cost = marginalCost(loadOf(c, m, cpu), memoryMb, lmax, n);
    if (cost < bestCost) {
      best = m;
      bestCost = cost;
    }
  }
  return best;
}

/** L_max lives with the policy for one run: it only ever grows, as loads are seen. */
export class LmaxTracker {
  value = 1;
  see(load: number): void {
    this.value = nextLmax(this.value, load);
  }
}

export function createEPvm(n: number, cpu: CpuLoad = "jobs"): PaperPolicy {
  const lmax = new LmaxTracker();
  return {
    name: "e-pvm",
    tickSeconds: 0,
    place(c, memoryMb) {
      const m = leastCostMachine(c, memoryMb, lmax.value, n, cpu);
      lmax.see(cpuLoadOf(c, m, cpu, 1));
      return m;
    },
    tick() {},
  };
}
