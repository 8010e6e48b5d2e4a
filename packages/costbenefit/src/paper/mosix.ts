// Mosix as the TPDS 2000 paper describes it (seed 003 section 6): load balancing by relative load
// (jobs per unit of speed) with a threshold, each machine knowing only the loads a small random
// subset of machines sent it this tick, and memory ushering, which comes first: a machine over its
// memory sends a job to a machine of the subset where it fits in free memory.
import type { Rng } from "../rng.ts";
import { randomOthers, type ClusterView, type PaperPolicy, type TickContext } from "./paper-policy.ts";

export interface MosixParameters {
  /** Seconds between load exchanges (and migration decisions). */
  tickSeconds: number;
  /** Machines whose load each machine hears per tick. */
  subset: number;
  /** A job moves only if the source's relative load exceeds the target's after the move by this much. */
  threshold: number;
  /** Where an arriving job starts before Mosix balances it: its home node in round robin, or a random one. */
  arrival: "round-robin" | "random";
}

const relativeLoad = (c: ClusterView, m: number, extra = 0): number => (c.tasks[m]!.length + extra) / c.speed[m]!;
const freeMemory = (c: ClusterView, m: number): number => c.memoryMb[m]! - c.memoryUsed[m]!;

/** The oldest job (most CPU received): under heavy-tailed lifetimes it is the likeliest to run on. */
function oldest(c: ClusterView, m: number, ctx: TickContext, fits: (task: number) => boolean): number {
  let best = -1;
  let age = -1;
  for (const task of c.tasks[m]!) {
    const a = ctx.attained(task);
    if (a > age && fits(task)) {
      best = task;
      age = a;
    }
  }
  return best;
}

/** One Mosix tick: each machine in turn ushers or balances at most one job. */
export function mosixRound(c: ClusterView, ctx: TickContext, p: MosixParameters, rng: Rng): number {
  let moves = 0;
  const set: number[] = [];
  for (let m = 0; m < c.speed.length; m++) {
    if (c.tasks[m]!.length === 0) continue;
    const known = set.slice(0, randomOthers(c.speed.length, m, p.subset, rng, set));
    if (c.memoryUsed[m]! > c.memoryMb[m]!) {
      // Ushering: the machine with the most free memory among those known, if the job fits there.
      let to = -1;
      for (const t of known) if (to < 0 || freeMemory(c, t) > freeMemory(c, to)) to = t;
      const task = to < 0 ? -1 : oldest(c, m, ctx, (x) => c.taskMemory[x]! <= freeMemory(c, to));
      if (task >= 0) {
        ctx.move(task, to);
        moves++;
        continue;
      }
    }
    // Balancing: to the least relatively loaded machine known, if that still leaves it lighter
    // than the source by the threshold; never where the job does not fit in free memory.
    let to = -1;
    for (const t of known) if (to < 0 || relativeLoad(c, t, 1) < relativeLoad(c, to, 1)) to = t;
    if (to < 0 || relativeLoad(c, m) - relativeLoad(c, to, 1) <= p.threshold) continue;
    const task = oldest(c, m, ctx, (x) => c.taskMemory[x]! <= freeMemory(c, to));
    if (task >= 0) {
      ctx.move(task, to);
      moves++;
    }
  }
  return moves;
}

export function createMosix(p: MosixParameters): PaperPolicy {
  let next = 0;
  return {
    name: "mosix",
    tickSeconds: p.tickSeconds,
    place(c, _memoryMb, rng) {
      if (p.arrival === "random") return rng.int(c.speed.length);
      const m = next;
      next = (next + 1) % c.speed.length;
      return m;
    },
    tick(c, ctx, rng) {
      mosixRound(c, ctx, p, rng);
    },
  };
}
