// The four algorithms of the TPDS 2000 paper behind one small interface, so the paper's simulator
// runs them alike. They see the cluster as the paper's machine model has it (jobs, memory, speed)
// and nothing the paper's schedulers could not know (no remaining work).
import type { Rng } from "../rng.ts";
import type { CpuLoad, MachineLoad } from "./paper-cost.ts";

export const PAPER_POLICY_NAMES = ["pvm", "e-pvm", "mosix", "e-mosix"] as const;
export type PaperPolicyName = (typeof PAPER_POLICY_NAMES)[number];

export function isPaperPolicyName(name: string): name is PaperPolicyName {
  return (PAPER_POLICY_NAMES as readonly string[]).includes(name);
}

/** The cluster as a policy reads it; `Cluster` (sim/cluster.ts) has this shape. */
export interface ClusterView {
  readonly speed: ArrayLike<number>;
  readonly memoryMb: ArrayLike<number>;
  readonly memoryUsed: ArrayLike<number>;
  /** Jobs (global indices) on each machine. */
  readonly tasks: readonly (readonly number[])[];
  readonly taskMemory: ArrayLike<number>;
}

/** What a periodic round may do and read, applied at once so the next decision sees it. */
export interface TickContext {
  move(task: number, to: number): void;
  /** Whether the job may move now (it has stayed its minimum residence where it is). */
  movable(task: number): boolean;
  /** CPU a job has received so far (what an operating system knows of a process's age). */
  attained(task: number): number;
}

export interface PaperPolicy {
  readonly name: PaperPolicyName;
  /** Seconds between periodic rounds; 0 when the policy never moves a job. */
  readonly tickSeconds: number;
  /** The machine an arriving job of `memoryMb` goes to. */
  place(c: ClusterView, memoryMb: number, rng: Rng): number;
  tick(c: ClusterView, ctx: TickContext, rng: Rng): void;
}

/**
 * `k` distinct machines other than `self`, in random order (a partial Fisher-Yates shuffle), in
 * the first entries of `out` (reused across calls: offer rounds draw once per job); returns how many.
 */
export function randomOthers(count: number, self: number, k: number, rng: Rng, out: number[]): number {
  out.length = 0;
  for (let m = 0; m < count; m++) if (m !== self) out.push(m);
  const take = Math.min(k, out.length);
  for (let i = 0; i < take; i++) {
    const j = i + rng.int(out.length - i);
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return take;
}

/** Machine `m` as the paper's cost sees it, its CPU load counted as `cpu` says (paper-cost.ts). */
export const loadOf = (c: ClusterView, m: number, cpu: CpuLoad = "jobs"): MachineLoad => ({
  jobs: c.tasks[m]!.length, memoryUsedMb: c.memoryUsed[m]!, memoryMb: c.memoryMb[m]!, speed: cpu === "jobs" ? 1 : c.speed[m]!,
});

/** The CPU load L_max is compared with: jobs, or jobs per unit of speed. */
export const cpuLoadOf = (c: ClusterView, m: number, cpu: CpuLoad, extra = 0): number =>
  (c.tasks[m]!.length + extra) / (cpu === "jobs" ? 1 : c.speed[m]!);
