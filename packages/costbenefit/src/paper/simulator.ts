// The paper's simulator: its machine model (sim/cluster.ts: CPU load = jobs, each job 1/L of the
// CPU, ten times slower while memory is over capacity) under one of its four algorithms. Separate
// from the market's simulator, which routes every decision through MarketState: the paper's
// schedulers see only jobs, memory and speed, and 3,000 runs of four of them must be quick.
import type { Rng } from "../rng.ts";
import { Cluster } from "../sim/cluster.ts";
import { EventQueue } from "../sim/event-queue.ts";
import type { RawJob } from "../sim/workloads/tpds2000.ts";
import type { PaperPolicy } from "./paper-policy.ts";

export interface PaperMachine {
  speed: number;
  memoryMb: number;
}

export interface PaperRunResult {
  completed: number;
  /** Sum and mean over jobs of (completion - arrival) x fastest speed / CPU demand. */
  slowdownSum: number;
  slowdownMean: number;
  migrations: number;
  /** Machine-seconds spent over memory capacity. */
  thrashSeconds: number;
  makespan: number;
}

const ARRIVAL = 0;
const COMPLETE = 1;
const TICK = 2;
const LAND = 3;

/**
 * What a migration costs. The paper's simulator charged none that we know of; here a moved job
 * leaves its machine at once and runs nowhere for memory / bandwidth seconds (its address space
 * crossing the network), then lands on the target with the work it had left. A job in transit is
 * on no machine, so no policy can move it again, and after landing it must stay at least
 * `minResidenceSeconds` before it may move again (policies ask `TickContext.movable`): with both,
 * a job cannot be bounced faster than it is carried and always progresses.
 */
export interface MigrationCost {
  /** MB per second; Infinity for free, instant moves. */
  bandwidthMbPerSecond: number;
  minResidenceSeconds: number;
}

export const FREE_MIGRATION: MigrationCost = { bandwidthMbPerSecond: Infinity, minResidenceSeconds: 0 };

export function simulatePaper(policy: PaperPolicy, machines: readonly PaperMachine[], jobs: readonly RawJob[], rng: Rng, migration: MigrationCost = FREE_MIGRATION): PaperRunResult {
  const count = machines.length;
  const fastest = Math.max(...machines.map((m) => m.speed));
  const cluster = new Cluster(machines.map((m) => m.speed), machines.map((m) => m.memoryMb), jobs.length);
  const version = new Int32Array(count);
  const q = new EventQueue();
  const r: PaperRunResult = { completed: 0, slowdownSum: 0, slowdownMean: 0, migrations: 0, thrashSeconds: 0, makespan: 0 };
  jobs.forEach((j, i) => q.push(j.arrivedAt, ARRIVAL, i));
  if (policy.tickSeconds > 0) q.push(policy.tickSeconds, TICK, 0);
  let inSystem = 0;
  let arrived = 0;

  const schedule = (m: number): void => {
    version[m] = (version[m]! + 1) & 0x7fff;
    const next = cluster.nextCompletion(m);
    if (next.task >= 0) q.push(next.time, COMPLETE, m * 65536 + version[m]!);
  };
  let now = 0;
  const touched = new Set<number>();
  const landTo = new Int32Array(jobs.length);
  const landWork = new Float64Array(jobs.length);
  const settledAt = new Float64Array(jobs.length).fill(-Infinity);
  const ctx = {
    move(task: number, to: number): void {
      const from = cluster.taskMachine[task]!;
      const mem = cluster.taskMemory[task]!;
      const rem = cluster.remove(task, now);
      touched.add(from);
      r.migrations++;
      const transfer = mem / migration.bandwidthMbPerSecond;
      if (transfer > 0) {
        landTo[task] = to;
        landWork[task] = rem;
        q.push(now + transfer, LAND, task);
        return;
      }
      cluster.add(to, task, rem, mem, now);
      settledAt[task] = now;
      touched.add(to);
    },
    movable(task: number): boolean {
      return now - settledAt[task]! >= migration.minResidenceSeconds;
    },
    attained(task: number): number {
      return jobs[task]!.work - cluster.remaining(task, now);
    },
  };

  const ev = { time: 0, kind: 0, arg: 0 };
  while (q.pop(ev)) {
    now = ev.time;
    if (ev.kind === ARRIVAL) {
      const j = jobs[ev.arg]!;
      const m = policy.place(cluster, j.memoryMb, rng);
      cluster.add(m, ev.arg, j.work, j.memoryMb, now);
      schedule(m);
      inSystem++;
      arrived++;
    } else if (ev.kind === COMPLETE) {
      const m = Math.floor(ev.arg / 65536);
      if ((ev.arg & 0xffff) !== version[m]) continue;
      for (;;) {
        const next = cluster.nextCompletion(m);
        if (next.task < 0 || next.time > now + 1e-9) break;
        cluster.remove(next.task, now);
        const j = jobs[next.task]!;
        inSystem--;
        r.completed++;
        r.slowdownSum += ((now - j.arrivedAt) * fastest) / j.work;
        r.makespan = Math.max(r.makespan, now);
      }
      schedule(m);
    } else if (ev.kind === LAND) {
      const task = ev.arg;
      cluster.add(landTo[task]!, task, landWork[task]!, jobs[task]!.memoryMb, now);
      settledAt[task] = now;
      schedule(landTo[task]!);
    } else {
      if (inSystem > 0) {
        touched.clear();
        policy.tick(cluster, ctx, rng);
        for (const m of touched) schedule(m);
      }
      if (arrived < jobs.length || inSystem > 0) q.push(now + policy.tickSeconds, TICK, 0);
    }
  }
  for (let m = 0; m < count; m++) cluster.advance(m, r.makespan);
  r.thrashSeconds = cluster.thrashSeconds;
  r.slowdownMean = r.completed > 0 ? r.slowdownSum / r.completed : 0;
  return r;
}
