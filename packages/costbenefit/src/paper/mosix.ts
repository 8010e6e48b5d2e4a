// Mosix as the TPDS 2000 paper describes it (the Java Market paper section 6): load balancing by relative load
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
  /**
   * What a machine knows of the others: `subset`, only the loads the machines of this tick's
   * subset sent it, fresh; `vector`, a load vector that keeps every load it was ever sent, so
   * entries are as old as the last message from that machine (each machine sends its load to
   * `subset` random others per tick) and a machine that looked light stays light in it until it
   * reports again.
   */
  knowledge?: "subset" | "vector";
}

/** A machine's view of the others' loads: jobs, memory used, as last reported. */
export interface LoadVector {
  jobs: Float64Array;
  memoryUsed: Float64Array;
}

const relativeLoad = (c: ClusterView, m: number, extra = 0): number => (c.tasks[m]!.length + extra) / c.speed[m]!;
const freeMemory = (c: ClusterView, m: number): number => c.memoryMb[m]! - c.memoryUsed[m]!;

/** The oldest job (most CPU received): under heavy-tailed lifetimes it is the likeliest to run on. */
function oldest(c: ClusterView, m: number, ctx: TickContext, fits: (task: number) => boolean): number {
  let best = -1;
  let age = -1;
  for (const task of c.tasks[m]!) {
    const a = ctx.attained(task);
    if (a > age && fits(task) && ctx.movable(task)) {
      best = task;
      age = a;
    }
  }
  return best;
}

/**
 * The load-vector exchange of one tick: every machine sends its current load to `subset` random
 * others, which overwrite their entry for it.
 */
function exchange(c: ClusterView, p: MosixParameters, rng: Rng, vectors: LoadVector[]): void {
  const set: number[] = [];
  for (let m = 0; m < c.speed.length; m++) {
    const k = randomOthers(c.speed.length, m, p.subset, rng, set);
    for (let i = 0; i < k; i++) {
      vectors[set[i]!]!.jobs[m] = c.tasks[m]!.length;
      vectors[set[i]!]!.memoryUsed[m] = c.memoryUsed[m]!;
    }
  }
}

/**
 * One Mosix tick: each machine in turn ushers or balances at most one job. With `vectors` (the
 * `vector` knowledge) a machine chooses among all others by the loads they last reported; the
 * job still moves only where it fits in the target's actual free memory (the target refuses it
 * otherwise).
 */
export function mosixRound(c: ClusterView, ctx: TickContext, p: MosixParameters, rng: Rng, vectors?: LoadVector[]): number {
  let moves = 0;
  const set: number[] = [];
  if (vectors) exchange(c, p, rng, vectors);
  const all = Array.from({ length: c.speed.length }, (_, i) => i);
  for (let m = 0; m < c.speed.length; m++) {
    if (c.tasks[m]!.length === 0) continue;
    const v = vectors?.[m];
    const known = v ? all.filter((t) => t !== m) : set.slice(0, randomOthers(c.speed.length, m, p.subset, rng, set));
    const seenFree = (t: number): number => (v ? c.memoryMb[t]! - v.memoryUsed[t]! : freeMemory(c, t));
    const seenLoad = (t: number, extra: number): number => (v ? (v.jobs[t]! + extra) / c.speed[t]! : relativeLoad(c, t, extra));
    if (c.memoryUsed[m]! > c.memoryMb[m]!) {
      // Ushering: the machine with the most free memory among those known, if the job fits there.
      let to = -1;
      for (const t of known) if (to < 0 || seenFree(t) > seenFree(to)) to = t;
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
    for (const t of known) if (to < 0 || seenLoad(t, 1) < seenLoad(to, 1)) to = t;
    if (to < 0 || relativeLoad(c, m) - seenLoad(to, 1) <= p.threshold) continue;
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
  // Made at the first tick, when the cluster's size is known; everyone starts out knowing every
  // machine empty.
  let vectors: LoadVector[] | undefined;
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
      if (p.knowledge === "vector") {
        const k = c.speed.length;
        vectors ??= Array.from({ length: k }, () => ({ jobs: new Float64Array(k), memoryUsed: new Float64Array(k) }));
      }
      mosixRound(c, ctx, p, rng, vectors);
    },
  };
}
