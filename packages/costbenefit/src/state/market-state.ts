// The live market in memory: machines, the tasks queued and running on them, the market's link,
// and the jobs waiting for re-evaluation. Deterministic: every method takes `now`; nothing reads a
// clock. The Market Manager keeps one instance up to date; the simulator drives another.
import { resourceCostSlopeLn } from "../cost.ts";
import { MachineProfile, type MachineProfileInput } from "../machine.ts";
import type { Job, PendingTask } from "../job.ts";
import { MarketSettings, type MarketSettingsInput } from "../settings.ts";
import type { Reason } from "../reasons.ts";
import { MachineTable } from "./machine-table.ts";
import { MachineTree } from "./machine-tree.ts";
import { TaskTable, type TaskRecord } from "./task-table.ts";

export type { TaskRecord } from "./task-table.ts";

/** The version of the state a decision looked at: its epoch (any change of capacity or load) and its machine count. */
export interface StateSeen {
  epoch: number;
  machines: number;
}

export interface DelayedJob {
  readonly job: Job;
  readonly since: number;
  /** State epoch when last evaluated: re-evaluate once capacity has changed since. */
  epoch: number;
  reasons: Reason[];
  /** When it was last evaluated, how many answers so far left it delayed, and how many machines there were then. */
  evaluatedAt: number;
  evaluations: number;
  machines: number;
}

/** A read-only view of one machine, for dashboards and explanations. */
export interface MachineView {
  profile: MachineProfile;
  backlogSeconds: number;
  running: number;
  queued: number;
  memoryUsedMb: number;
  taskIds: string[];
}

export class MarketState {
  readonly machines = new MachineTable();
  /** The placement search's index: machines grouped by profile, with each group's extremes (machine-tree.ts). */
  readonly tree = new MachineTree(this.machines);
  /** The tasks on the machines, by id (has, get, size, values, keys: read like a Map). */
  readonly tasks = new TaskTable();
  readonly delayed = new Map<string, DelayedJob>();
  committedBytes = 0;
  /** Bumped whenever capacity may have grown (machine added, task finished or removed). */
  epoch = 0;
  /** Count of placements ever committed: the round-robin cursor, kept in the state so it replays. */
  placementsCommitted = 0;
  private _settings: MarketSettings;
  private aggregatesCache: Aggregates | undefined;

  constructor(settings: MarketSettingsInput = {}) {
    this._settings = MarketSettings.parse(settings);
    this.tree.setHorizon(this._settings.horizonSeconds);
  }

  get settings(): MarketSettings {
    return this._settings;
  }

  /** Change settings at run time; unknown keys are refused by the schema. */
  updateSettings(patch: MarketSettingsInput): void {
    this._settings = MarketSettings.parse({ ...this._settings, ...patch });
    this.tree.setHorizon(this._settings.horizonSeconds);
    this.epoch++;
  }

  get machineCount(): number {
    return this.machines.count;
  }

  /** n in n^(usage/max): the number of machines, at least 2 (docs/DESIGN.md). */
  get n(): number {
    return Math.max(2, this.machines.count);
  }

  hasMachine(id: string): boolean {
    return this.machines.rowById.has(id);
  }

  rowOf(id: string): number | undefined {
    return this.machines.rowById.get(id);
  }

  /** Add a machine, or update its profile if the id is known (its tasks stay). */
  upsertMachine(input: MachineProfileInput, now: number): void {
    const p = MachineProfile.parse(input);
    const m = this.machines;
    let row = m.rowById.get(p.id);
    if (row === undefined) {
      row = m.allocate(p.id).row;
      m.f.at[row] = now;
      this.tasks.machines(m.capacityLimit);
      m.setProfile(row, p);
      this.tree.insert(row);
    } else {
      m.roll(row, now);
      m.setProfile(row, p);
      this.tree.profileChanged(row);
    }
    this.aggregatesCache = undefined;
    this.epoch++;
  }

  /** A machine departed: its tasks go back to the market, returned for re-placement. */
  removeMachine(id: string, now: number): PendingTask[] {
    void now;
    const row = this.machines.rowById.get(id);
    if (row === undefined) return [];
    const back: PendingTask[] = [];
    const tasks = this.tasks;
    for (const k of tasks.on(row)) {
      back.push({ id: tasks.idOf(k), jobId: tasks.jobOf(k), work: tasks.work[k]!, memoryMb: tasks.memoryMb[k]!, bytes: tasks.bytes[k]! });
      this.committedBytes -= tasks.bytes[k]!;
      tasks.remove(k);
    }
    tasks.clearMachine(row);
    this.tree.remove(row);
    this.machines.release(row);
    this.aggregatesCache = undefined;
    return back;
  }

  /** A task joins a machine's queue (a committed placement). */
  assignTask(task: PendingTask, machineId: string, now: number): void {
    const row = this.requireMachine(machineId);
    if (this.tasks.has(task.id)) throw new Error(`task ${task.id} is already placed`);
    const m = this.machines;
    m.roll(row, now);
    this.tasks.add(task, row);
    m.f.work[row]! += task.work;
    m.f.queuedWork[row]! += task.work;
    m.i.queued[row]!++;
    this.committedBytes += task.bytes;
    this.placementsCommitted++;
    this.rekey(row);
  }

  taskStarted(taskId: string, now: number): void {
    const k = this.requireTask(taskId);
    const tasks = this.tasks;
    if (tasks.running(k)) return;
    const m = this.machines;
    const row = tasks.machine[k]!;
    m.roll(row, now);
    tasks.startedAt[k] = now;
    m.f.queuedWork[row]! -= tasks.work[k]!;
    m.i.queued[row]!--;
    m.i.running[row]!++;
    m.f.runningMemory[row]! += tasks.memoryMb[k]!;
    this.rekey(row);
  }

  /** A task finished (or failed, or was cancelled): it leaves its machine and the link. */
  taskFinished(taskId: string, now: number, measuredSeconds = 0): void {
    void measuredSeconds;
    const tasks = this.tasks;
    const k = tasks.indexOf(taskId);
    if (k < 0) return;
    const row = tasks.machine[k]!;
    this.machines.roll(row, now);
    this.detach(k, now);
    this.committedBytes -= tasks.bytes[k]!;
    tasks.remove(k);
    this.epoch++;
    this.rekey(row);
  }

  /** Move a queued (or, for migrating policies, running) task to another machine. */
  moveTask(taskId: string, toMachineId: string, now: number): void {
    const k = this.requireTask(taskId);
    const to = this.requireMachine(toMachineId);
    const tasks = this.tasks;
    const from = tasks.machine[k]!;
    const m = this.machines;
    m.roll(from, now);
    m.roll(to, now);
    const wasRunning = tasks.running(k);
    const left = this.detach(k, now);
    tasks.move(k, to);
    m.f.work[to]! += left;
    if (wasRunning) {
      m.i.running[to]!++;
      m.f.runningMemory[to]! += tasks.memoryMb[k]!;
      // Progress so far carries over: count the task as restarted with its remaining work.
      tasks.startedAt[k] = now - (tasks.work[k]! - left) / m.f.speed[to]!;
    } else {
      m.f.queuedWork[to]! += tasks.work[k]!;
      m.i.queued[to]!++;
    }
    this.epoch++;
    this.rekey(from);
    this.rekey(to);
  }

  /** Measured remaining work on a machine (heartbeat, or the simulator's ground truth). */
  reportBacklog(machineId: string, remainingWork: number, now: number): void {
    const row = this.requireMachine(machineId);
    const m = this.machines;
    m.f.work[row] = Math.max(m.f.queuedWork[row]!, remainingWork);
    m.f.at[row] = now;
    this.rekey(row);
  }

  /**
   * Measured progress of a running task: `remainingWork` work units are left at `now`. The state
   * otherwise assumes a running task has had its machine's full speed since it started, which on a
   * time-shared machine overstates its progress; moves of running tasks weigh this estimate.
   */
  reportTaskProgress(taskId: string, remainingWork: number, now: number): void {
    const tasks = this.tasks;
    const k = tasks.indexOf(taskId);
    if (k < 0 || !tasks.running(k)) return;
    const work = tasks.work[k]!;
    const left = Math.min(work, Math.max(0, remainingWork));
    tasks.startedAt[k] = now - (work - left) / this.machines.f.speed[tasks.machine[k]!]!;
  }

  /** The state's estimate of a task's remaining work at `now` (all of it while queued). */
  remainingOf(t: TaskRecord, now: number): number {
    if (!t.running) return t.work;
    return Math.max(0, t.work - this.machines.f.speed[t.machine]! * Math.max(0, now - t.startedAt));
  }

  /** The tasks on machine `row`, newest first. */
  tasksOn(row: number): TaskRecord[] {
    const tasks = this.tasks;
    return tasks.on(row).map((k) => tasks.record(k));
  }

  /** What a decision taken now has seen of the market: a delayed job is asked again once this has changed. */
  seen(): StateSeen {
    return { epoch: this.epoch, machines: this.machineCount };
  }

  /**
   * A job the policy delayed, kept for re-evaluation. `seen` is the state the policy looked at
   * (default: now); a service that commits a decision after writing it down passes what it saw
   * when deciding, so a machine that joined or a task that finished meanwhile still counts as a
   * change and the job is asked again at the next tick rather than waiting for another one.
   */
  delayJob(job: Job, now: number, reasons: Reason[], seen: StateSeen = this.seen()): void {
    const prev = this.delayed.get(job.id);
    this.delayed.set(job.id, { job, since: prev?.since ?? now, epoch: seen.epoch, reasons, evaluatedAt: now, evaluations: (prev?.evaluations ?? 0) + 1, machines: seen.machines });
  }

  forgetDelayedJob(jobId: string): void {
    this.delayed.delete(jobId);
  }

  machine(id: string, now: number): MachineView | undefined {
    const row = this.machines.rowById.get(id);
    if (row === undefined) return undefined;
    const m = this.machines;
    const taskIds = this.tasks.on(row).map((k) => this.tasks.idOf(k));
    return {
      profile: m.profile(row),
      backlogSeconds: m.remaining(row, now) / m.f.capacity[row]!,
      running: m.i.running[row]!,
      queued: m.i.queued[row]!,
      memoryUsedMb: m.f.runningMemory[row]!,
      taskIds,
    };
  }

  /** Machine-wide extremes used for admission bounds; recomputed only after machines change. */
  aggregates(): Aggregates {
    if (this.aggregatesCache) return this.aggregatesCache;
    const m = this.machines;
    const a: Aggregates = { maxSpeed: 0, maxCapacity: 0, minCapacity: Infinity, maxBandwidth: 0, maxMemoryPerSlot: 0, minMemoryTotal: Infinity, maxPricePerWork: 0 };
    for (let s = 0; s < m.end; s++) {
      if (!m.live(s)) continue;
      const f = m.f;
      a.maxSpeed = Math.max(a.maxSpeed, f.speed[s]!);
      a.maxCapacity = Math.max(a.maxCapacity, f.capacity[s]!);
      a.minCapacity = Math.min(a.minCapacity, f.capacity[s]!);
      a.maxBandwidth = Math.max(a.maxBandwidth, f.bandwidth[s]!);
      a.maxMemoryPerSlot = Math.max(a.maxMemoryPerSlot, f.memoryPerSlot[s]!);
      a.minMemoryTotal = Math.min(a.minMemoryTotal, f.memoryPerSlot[s]! * f.slots[s]!);
      a.maxPricePerWork = Math.max(a.maxPricePerWork, f.pricePerSecond[s]! / f.speed[s]!);
    }
    this.aggregatesCache = a;
    return a;
  }

  /**
   * Linearized unit cost of machine `row` at `now`, in credits per work unit:
   * P ln(n) n^u / (capacity H) + cps / speed. Since e^x - 1 >= x, w times this is a lower bound
   * of the exact compute marginal plus payment: the market's unit quote for a dedicated offer.
   */
  unitKey(row: number, now: number, n = this.n): number {
    const m = this.machines;
    // Switched-off capacity offers no price.
    if (m.f.available[row] === 0) return Infinity;
    const H = this._settings.horizonSeconds;
    const capacity = m.f.capacity[row]!;
    const backlogSeconds = m.remaining(row, now) / capacity;
    return (this._settings.priceConstant * resourceCostSlopeLn(Math.log(n), backlogSeconds, H)) / capacity + m.f.pricePerSecond[row]! / m.f.speed[row]!;
  }

  /** Bring the placement search's index up to date with every change since the last search. */
  ensureIndex(): void {
    this.tree.flush();
  }

  private rekey(row: number): void {
    this.tree.loadChanged(row);
  }

  /** The task stops counting on its machine; returns its estimated remaining work. */
  private detach(k: number, now: number): number {
    const m = this.machines;
    const tasks = this.tasks;
    const row = tasks.machine[k]!;
    const work = tasks.work[k]!;
    let left = work;
    if (tasks.running(k)) {
      left = Math.max(0, work - m.f.speed[row]! * Math.max(0, now - tasks.startedAt[k]!));
      m.i.running[row]!--;
      m.f.runningMemory[row]! -= tasks.memoryMb[k]!;
      if (m.i.running[row] === 0) m.f.runningMemory[row] = 0;
    } else {
      m.f.queuedWork[row]! -= work;
      m.i.queued[row]!--;
    }
    m.f.work[row] = Math.max(m.f.queuedWork[row]!, m.f.work[row]! - left, 0);
    return left;
  }

  private requireMachine(id: string): number {
    const s = this.machines.rowById.get(id);
    if (s === undefined) throw new Error(`unknown machine ${id}`);
    return s;
  }

  private requireTask(id: string): number {
    const k = this.tasks.indexOf(id);
    if (k < 0) throw new Error(`unknown task ${id}`);
    return k;
  }
}

export interface Aggregates {
  maxSpeed: number;
  maxCapacity: number;
  minCapacity: number;
  maxBandwidth: number;
  maxMemoryPerSlot: number;
  minMemoryTotal: number;
  maxPricePerWork: number;
}
