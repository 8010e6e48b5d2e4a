// A seeded discrete-event simulator: any policy over any workload, on the time-shared cluster of
// cluster.ts, with the same MarketState and decisions the live Market Manager uses.
import { benefitAt } from "../benefit.ts";
import { commitDecision } from "../commit.ts";
import type { Decision } from "../decision.ts";
import type { Job } from "../job.ts";
import type { MachineProfileInput } from "../machine.ts";
import { MachineProfile } from "../machine.ts";
import type { Policy } from "../policies/types.ts";
import type { Rng } from "../rng.ts";
import type { MarketSettingsInput } from "../settings.ts";
import { MarketState } from "../state/market-state.ts";
import { Cluster } from "./cluster.ts";
import { EventQueue } from "./event-queue.ts";

export interface Workload {
  name: string;
  machines: MachineProfileInput[];
  /** Sorted by arrival. Task ids unique across the workload. */
  jobs: Job[];
  settings: MarketSettingsInput;
  /**
   * Guess the compute maximum online (the Java Market paper, 4.3, after its reference [6]) instead of fixing
   * it: before each decision H becomes the smallest power-of-two multiple of the workload's H at
   * which some machine with memory to spare can take the job within it. Memory's maximum is the
   * machine's physical memory and never moves.
   */
  adaptiveHorizon?: boolean;
}

export interface SimResult {
  jobs: number;
  completed: number;
  admitted: number;
  /** Jobs delayed at least once (they may have been admitted or rejected later). */
  delayed: number;
  rejected: number;
  /** Sum and mean of (completion - arrival) x fastest speed / CPU demand over completed jobs. */
  slowdownSum: number;
  slowdownMean: number;
  /** True benefit b(j, t) at completion, summed over completed jobs (the value delivered). */
  benefit: number;
  /** Paid to opportunistic producers per second of CPU use. */
  payments: number;
  /** Benefit delivered minus producer payments: the market's profit under pay-as-bid. */
  profit: number;
  /** The same sum under any pricing rule: charges are transfers between consumer and market. */
  welfare: number;
  /**
   * What consumers were charged for completed jobs by the pricing rule in force (settlement.ts,
   * docs/DESIGN.md "Settlement"): posted, min(quoted price, b(j, t)); bid, b(j, t). Negative charges
   * are compensation for a benefit that fell below zero.
   */
  charged: number;
  /** Charges minus producer payments. */
  marketProfit: number;
  /** Sum over completed jobs of b(j, t) minus the charge. */
  consumerSurplus: number;
  /** CPU work done over capacity x makespan. */
  utilisation: number;
  makespan: number;
  migrations: number;
  /** Machine-seconds spent thrashing (memory over capacity), summed over machines. */
  thrashSeconds: number;
}

const ARRIVAL = 0;
const COMPLETE = 1;
const TICK = 2;

export function simulate(policy: Policy, w: Workload, rng: Rng, tickSeconds = 5): SimResult {
  const profiles = w.machines.map((m) => MachineProfile.parse(m));
  const ids = profiles.map((p) => p.id);
  const fastest = Math.max(...profiles.map((p) => p.speed));
  const state = new MarketState(w.settings);
  for (const p of profiles) state.upsertMachine(p, 0);
  const machineIndex = new Map(ids.map((id, i) => [id, i]));

  // Global task numbering.
  const taskIndex = new Map<string, number>();
  const taskJob: number[] = [];
  const taskWork: number[] = [];
  w.jobs.forEach((j, ji) => j.tasks.forEach((t) => {
    taskIndex.set(t.id, taskWork.length);
    taskJob.push(ji);
    taskWork.push(t.work);
  }));
  const cluster = new Cluster(profiles.map((p) => p.speed * p.slots), profiles.map((p) => p.memoryPerSlotMb * p.slots), taskWork.length);
  const price = profiles.map((p) => (p.kind === "opportunistic" ? p.pricePerSecond : 0));
  const taskIds = [...taskIndex.keys()];
  const workAtAdd = new Float64Array(taskWork.length);
  const left = new Int32Array(w.jobs.length);
  const demand = w.jobs.map((j) => Math.max(...j.tasks.map((t) => t.work)));
  const version = new Int32Array(profiles.length);
  const everDelayed = new Uint8Array(w.jobs.length);
  // The price quoted at admission, per job: under posted pricing the charge is never more.
  const quoted = new Float64Array(w.jobs.length);
  const posted = state.settings.pricing === "posted";

  const r: SimResult = { jobs: w.jobs.length, completed: 0, admitted: 0, delayed: 0, rejected: 0, slowdownSum: 0, slowdownMean: 0, benefit: 0, payments: 0, profit: 0, welfare: 0, charged: 0, marketProfit: 0, consumerSurplus: 0, utilisation: 0, makespan: 0, migrations: 0, thrashSeconds: 0 };
  const q = new EventQueue();
  w.jobs.forEach((j, i) => q.push(j.arrivedAt, ARRIVAL, i));
  // Policies with admission control re-evaluate delayed jobs at ticks.
  const needsTicks = policy.profile.migration.rule !== "none" || policy.profile.admission !== "admit-all";
  const lastArrival = w.jobs.length > 0 ? w.jobs[w.jobs.length - 1]!.arrivedAt : 0;
  if (needsTicks) q.push(tickSeconds, TICK, 0);
  let inSystem = 0;

  const schedule = (m: number): void => {
    version[m]!++;
    const next = cluster.nextCompletion(m);
    if (next.task >= 0) q.push(next.time, COMPLETE, m * 65536 + (version[m]! & 0xffff));
  };
  // Machines report the delay they would impose on a typical task (the mean work seen so far).
  let workSeen = 0;
  let tasksSeen = 0;
  const typical = (): number => (tasksSeen > 0 ? workSeen / tasksSeen : 1);
  const sync = (now: number, w0 = typical()): void => {
    for (let m = 0; m < ids.length; m++) state.reportBacklog(ids[m]!, cluster.sharedBacklog(m, now, w0), now);
  };
  const baseH = state.settings.horizonSeconds;
  const adaptHorizon = (work: number, memoryMb: number, now: number): void => {
    let H = baseH;
    const mt = state.machines;
    const row = (m: number): number => mt.rowById.get(ids[m]!)!;
    const roomy = (m: number): boolean => mt.f.runningMemory[row(m)]! + memoryMb <= cluster.memoryMb[m]!;
    // Machines with memory to spare, if any: raising H never makes room in memory.
    const candidates = ids.map((_, m) => m).filter(roomy);
    const pool = candidates.length > 0 ? candidates : ids.map((_, m) => m);
    const fits = (h: number): boolean => {
      for (const m of pool) {
        const c = cluster.speed[m]!;
        if (mt.remaining(row(m), now) / c + Math.min(work / c, h / 2) <= h) return true;
      }
      return false;
    };
    while (!fits(H) && H < 1e7) H *= 2;
    if (H !== state.settings.horizonSeconds) state.updateSettings({ horizonSeconds: H });
  };
  const pay = (task: number, m: number, remaining: number): void => {
    // cps per second of CPU use on one slot: work done / slot speed.
    r.payments += (price[m]! * (workAtAdd[task]! - remaining)) / profiles[m]!.speed;
  };
  const apply = (ji: number, d: Decision, now: number): void => {
    const job = w.jobs[ji]!;
    commitDecision(state, job, d, now);
    if (d.outcome === "admitted") {
      r.admitted++;
      inSystem++;
      quoted[ji] = d.price;
      left[ji] = d.placements.length;
      const touched = new Set<number>();
      for (const p of d.placements) {
        const t = taskIndex.get(p.taskId)!;
        const m = machineIndex.get(p.machineId)!;
        // Time sharing: every task on a machine runs at once.
        state.taskStarted(p.taskId, now);
        cluster.add(m, t, taskWork[t]!, job.tasks.find((x) => x.id === p.taskId)!.memoryMb, now);
        workAtAdd[t] = taskWork[t]!;
        touched.add(m);
      }
      for (const m of touched) schedule(m);
    } else if (d.outcome === "delayed") {
      if (!everDelayed[ji]) r.delayed++;
      everDelayed[ji] = 1;
    } else {
      r.rejected++;
    }
  };

  const ev = { time: 0, kind: 0, arg: 0 };
  let now = 0;
  while (q.pop(ev)) {
    now = ev.time;
    if (ev.kind === ARRIVAL) {
      for (const t of w.jobs[ev.arg]!.tasks) {
        workSeen += t.work;
        tasksSeen++;
      }
      // On a time-shared machine the backlog that delays a task of w is sum(min(r_i, w)).
      sync(now, demand[ev.arg]!);
      if (w.adaptiveHorizon) adaptHorizon(demand[ev.arg]!, Math.max(...w.jobs[ev.arg]!.tasks.map((t) => t.memoryMb)), now);
      apply(ev.arg, policy.admit(state, w.jobs[ev.arg]!, now, rng), now);
    } else if (ev.kind === COMPLETE) {
      const m = Math.floor(ev.arg / 65536);
      if ((ev.arg & 0xffff) !== (version[m]! & 0xffff)) continue;
      for (;;) {
        const next = cluster.nextCompletion(m);
        if (next.task < 0 || next.time > now + 1e-9) break;
        const t = next.task;
        cluster.remove(t, now);
        pay(t, m, 0);
        state.taskFinished(taskIds[t]!, now);
        const ji = taskJob[t]!;
        if (--left[ji]! === 0) {
          const job = w.jobs[ji]!;
          inSystem--;
          r.completed++;
          r.slowdownSum += ((now - job.arrivedAt) * fastest) / demand[ji]!;
          const b = benefitAt(job.benefit, now - job.arrivedAt);
          // Posted: the quote, less if the market finished late; bid: the paper's b(j, t).
          const charge = posted ? Math.min(quoted[ji]!, b) : b;
          r.benefit += b;
          r.charged += charge;
          r.consumerSurplus += b - charge;
          r.makespan = Math.max(r.makespan, now);
        }
      }
      schedule(m);
    } else {
      sync(now);
      // Machines report each running task's progress, as heartbeats do.
      for (let m = 0; m < ids.length; m++) for (const t of cluster.tasks[m]!) state.reportTaskProgress(taskIds[t]!, cluster.remaining(t, now), now);
      if (w.adaptiveHorizon) adaptHorizon(typical(), 0, now);
      const tick = policy.tick(state, now, rng);
      const touched = new Set<number>();
      for (const mv of tick.moves) {
        const t = taskIndex.get(mv.taskId)!;
        const from = machineIndex.get(mv.fromMachineId)!;
        const to = machineIndex.get(mv.toMachineId)!;
        const rem = cluster.remove(t, now);
        pay(t, from, rem);
        workAtAdd[t] = rem;
        cluster.add(to, t, rem, cluster.taskMemory[t]!, now);
        state.moveTask(mv.taskId, mv.toMachineId, now);
        state.reportBacklog(mv.fromMachineId, cluster.sharedBacklog(from, now, typical()), now);
        state.reportBacklog(mv.toMachineId, cluster.sharedBacklog(to, now, typical()), now);
        touched.add(from).add(to);
        r.migrations++;
      }
      for (const m of touched) schedule(m);
      for (const x of tick.reject) {
        state.forgetDelayedJob(x.jobId);
        r.rejected++;
      }
      for (const id of tick.reevaluate) {
        const d = state.delayed.get(id);
        if (!d) continue;
        const ji = jobIndexOf(w, id);
        apply(ji, policy.admit(state, d.job, now, rng), now);
      }
      if (now < lastArrival || inSystem > 0 || state.delayed.size > 0) q.push(now + tickSeconds, TICK, 0);
    }
  }
  r.slowdownMean = r.completed > 0 ? r.slowdownSum / r.completed : 0;
  r.profit = r.benefit - r.payments;
  r.welfare = r.profit;
  r.marketProfit = r.charged - r.payments;
  let work = 0;
  for (let m = 0; m < ids.length; m++) work += cluster.workDone[m]!;
  const capacity = profiles.reduce((a, p) => a + p.speed * p.slots, 0);
  r.utilisation = r.makespan > 0 ? work / (capacity * r.makespan) : 0;
  r.thrashSeconds = cluster.thrashSeconds;
  return r;
}

const jobIndexCache = new WeakMap<Workload, Map<string, number>>();
function jobIndexOf(w: Workload, id: string): number {
  let m = jobIndexCache.get(w);
  if (!m) {
    m = new Map(w.jobs.map((j, i) => [j.id, i]));
    jobIndexCache.set(w, m);
  }
  return m.get(id)!;
}
