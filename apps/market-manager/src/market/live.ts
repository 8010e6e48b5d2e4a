// The live market held in memory by the one Market Manager process. Every change to it is
// made after the same change is committed to PostgreSQL, so it can always be rebuilt from there.
import { offeredSpeed, type MachineControls } from "@cyclemarket/worker-runtime";
import { leaseRoomLeft, maxCopies, type Asked, type BenefitCurve, type ContractProof, type WorkPrice, type WorkSample } from "@cyclemarket/costbenefit";
import { TaskQueue } from "./task-queue.ts";
import type { LiveOwner } from "./standing.ts";

export type TaskState = "pending" | "queued" | "leased" | "done" | "failed";

export interface LiveMachine {
  id: string;
  ownerId: string;
  name: string;
  kind: "opportunistic" | "dedicated";
  slots: number;
  /** What the market believes now: the benchmark's speed, lowered by what its own clock measured. */
  speed: number;
  /** The benchmark's speed at join: no measurement raises `speed` above it. */
  benchmarkSpeed: number;
  memoryPerSlotMb: number;
  /** The producer's price per second of this machine at its benchmark speed (askOf: per reference second). */
  pricePerSecondMicro: bigint;
  /** The network it registered from (/24 or /48), where known. */
  network: string | null;
  /** In [0, 1]: its owner's standing score (market/standing.ts), the engine's profile reputation. */
  reputation: number;
  /** Dedicated machines: the contract's total price and when the machine leaves (ms). */
  contractPriceMicro: bigint | null;
  departsAt: number | null;
  /** Dedicated machines: when the contract started, paid up to when, and how much so far. */
  contractStartAt: number | null;
  contractPaidUntil: number | null;
  contractPaidMicro: bigint;
  /**
   * Its leases that expired since its last accepted result: a machine that takes work and lets
   * more than a round of its slots' leases lapse, delivering nothing, is taken out (sweeper.ts), or
   * it could hold a task through expiry after expiry as the cheapest machine it is placed on again.
   */
  unprovenExpiries: number;
  /**
   * Until when a run of one of its lapsed leases may still deliver the task's first result, which
   * is accepted late (tasks/results.ts) by the manager holding the machine only: the machine is not
   * handed to another manager before then (machine-handoff.ts handable). Epoch milliseconds.
   */
  lateUntil?: number | undefined;
  /** Tasks placed on this machine and not yet leased, in the order they will be handed out. */
  queue: TaskQueue;
  leases: Set<string>;
  lastHeartbeatAt: number;
  /** The producer's controls: pause, CPU limit, only while idle, schedule, memory cap per task. */
  controls: MachineControls;
  /** False while the worker says its schedule or its owner's use switches its capacity off. */
  localAvailable: boolean;
  /**
   * Set when the same physical machine is offered to several Market Managers at once (the Java
   * Market paper, section 4.4: the subsets may intersect): each holds a row of its own with this key.
   */
  offerKey?: string | null;
  /** Its worker follows `machine-moved` to another manager; only such a machine is handed (machine-handoff.ts). */
  follows?: boolean;
  /**
   * Dedicated machines: up to when the machine proved it is there, and its last miss not yet
   * followed by a proof (costbenefit contractProved; resources/presence.ts). Paid up to here, never
   * for heartbeats. Epoch milliseconds.
   */
  proof?: ContractProof | undefined;
  /** Dedicated machines: the probe it has to answer now, and when an idle machine is probed next. */
  probe?: LiveProbe | undefined;
  nextProbeAt?: number | undefined;
  /** Since when it has held work queued for it and no lease: it must lease within the lease timeout. */
  owedSince?: number | undefined;
  /**
   * It missed (left queued work unleased, a probe unanswered, a lease run out): from when. It is
   * offered no work until it proves itself again (a probe answered; an opportunistic machine's next lease call).
   */
  strayedSince?: number | undefined;
  /**
   * An admin moved it while it was busy: the manager it goes to once it holds no lease
   * (market/machine-drains.ts). It is offered no work meanwhile.
   */
  drainingTo?: string | undefined;
}

/**
 * A probe task sent to an idle dedicated machine: a small module whose answer the market knows
 * (resources/probes.ts). It travels as a lease with this id, and is answered by a report naming it.
 */
export interface LiveProbe {
  id: string;
  machineId: string;
  seed: string;
  rounds: number;
  /** What the probe module prints for this seed. */
  answer: string;
  issuedAt: number;
  /** Answered after this, it is missed. */
  dueAt: number;
  /** Handed to the machine (on its work stream or in a lease call's answer). */
  sent: boolean;
}

/**
 * Whether the machine offers its capacity now: not paused, its own conditions allow it, it has not
 * missed work since it last proved itself, and it is not draining toward another manager. The one
 * rule for whether a machine may get new work: the engine plans on it, and leases follow it.
 */
export const offering = (m: LiveMachine) => !m.controls.paused && m.localAvailable && m.strayedSince === undefined && m.drainingTo === undefined;

/** Slots the machine offers now: none while its capacity is switched off. */
export const offeredSlots = (m: LiveMachine) => (offering(m) ? m.slots : 0);

/** Leases a machine may still take while it holds `held` (the engine's leaseRoomLeft): by default, those it holds now. */
export const leaseRoomOf = (m: LiveMachine, held = m.leases.size) => leaseRoomLeft(offeredSlots(m), held);

/** The machine's ask in micro-credits per reference second of work (its price per second over its benchmark speed). */
export const askOf = (m: Pick<LiveMachine, "pricePerSecondMicro" | "benchmarkSpeed">) => Number(m.pricePerSecondMicro) / (m.benchmarkSpeed > 0 ? m.benchmarkSpeed : 1);

/** The capacity the producer offers: the benchmark's figures under the CPU limit and the memory cap. */
export function offeredCapacity(m: LiveMachine) {
  const cap = m.controls.maxTaskMemoryMb;
  return {
    available: offering(m),
    speed: offeredSpeed(m.speed, m.controls.cpuLimit),
    memoryPerSlotMb: cap === null ? m.memoryPerSlotMb : Math.min(cap, m.memoryPerSlotMb),
  };
}

export interface LiveJob {
  id: string;
  ownerId: string;
  moduleHash: string;
  example: string | null;
  status: "delayed" | "admitted" | "running";
  taskCount: number;
  tasksDone: number;
  /**
   * The work a lease's piece rate is fixed at now (reference seconds): the declared work until
   * enough runs on other owners' machines measured it (costbenefit workAtLease).
   */
  workPerTask: number;
  /** What the consumer declared; measurements over its tolerance contradict the estimate. */
  declaredWorkPerTask: number;
  /** Work measured by runs on machines of owners other than the consumer (the first ones only). */
  workSamples: WorkSample[];
  /** Each task's wall-time limit (its job file's, else the market's default): no run can honestly take longer. */
  wallMs: number;
  memoryMbPerTask: number;
  /** What the consumer put in escrow for the job (micro-credits): what it can be charged. */
  escrowMicro: bigint;
  /** The price quoted at admission: what the consumer pays while the estimate holds. */
  priceMicro: bigint;
  /** The most the consumer allows when the measured work contradicts the estimate (null: the price). */
  maxSpendMicro: bigint | null;
  /** The admitted plan priced at multiples of the declared work (costbenefit priceAtWork); null for a job admitted without it. */
  priceAtWork: WorkPrice[] | null;
  /** The network the job was submitted from, where known. */
  submitNetwork: string | null;
  /** Piece rates of late runs held in the escrow for lateness. */
  heldMicro: bigint;
  /** Tasks that failed in a way a machine of another owner reproduced. */
  failedTasks: number;
  /** The pricing rule the job was admitted under, and is settled by. */
  pricing: "posted" | "bid";
  /** k copies of each task; a task is done when a majority of copies agree on the output. */
  replicas: number;
  /** Verification added copies to some of its tasks (their replica is at least `replicas`): other machines may have to take them. */
  copiesAdded?: boolean | undefined;
  arrivedAt: number;
  /**
   * When its admitted plan expected it to complete (ms, the market's clock); null while delayed or
   * unknown. The market answers for its own downtime's delay only from this completion on.
   */
  plannedAt: number | null;
  /** The job's BenefitCurve, kept for re-evaluation while the job is delayed. */
  benefit: BenefitCurve;
  /** A job submitted without a work estimate: its first tasks run as pilots (costbenefit pilots.ts). */
  pilots?: LivePilots | undefined;
  /**
   * What its producers were paid out of its escrow so far: moved as each payment commits (a
   * group's statement counts its rows ahead and takes them back if it fails), read from the
   * ledger for a job restored at start. With the held pieces and the pieces its live leases
   * promise, it is what the job's budget check counts (resources/leases.ts).
   */
  paidMicro: bigint;
  /**
   * The indices of its tasks decided while it has been in memory, in the order their results were
   * committed: a stream of the job's outputs (api/live/job.ts jobResults) reads the new ones from
   * its place in this list instead of looking through the job's tasks in PostgreSQL.
   */
  decided?: number[] | undefined;
  /** Producers caught forging in this job: paid nothing more of it (tasks/forfeit.ts). */
  forfeited?: Set<string> | undefined;
}

export interface LivePilots {
  /** Tasks with index below this are the pilots; the others join the market once the rest is admitted. */
  count: number;
  /** What the pilots were priced at: the rest is decided against the benefit this leaves. */
  priceMicro: bigint;
  /** "provisional" while the pilots run, "measured" once the rest is planned from them. */
  phase: "provisional" | "measured";
  /** When the rest was last put to the engine: a delayed rest is asked again by the engine's backoff. */
  asked?: Asked | undefined;
}

export interface LiveTask {
  id: string;
  jobId: string;
  index: number;
  /** Copy number when the job runs replicas (0 is the original); copies share `index`. */
  replica: number;
  /** Bytes of input the task takes to its machine (its stdin): the engine plans the network on them. */
  bytes: number;
  machineId: string | null;
  state: TaskState;
  attempts: number;
  /** A copy that ran: its result, output hash and the owner of the machine that ran it. */
  resultId?: string | undefined;
  producerId?: string | undefined;
  /** The network of the machine that ran it, where known: copies of one network count once. */
  producerNetwork?: string | null | undefined;
  outputHash?: string | undefined;
  /** Once a majority of copies agree: the output hash they agree on. */
  agreedHash?: string | undefined;
  /** A statement leasing this queued task is in the journal: no other lease takes it. */
  leasing?: boolean | undefined;
  /** What the run that decided it was paid (for a copy judged after its report: replicas). */
  pieceMicro?: bigint | undefined;
  /** Failed runs of this task not yet confirmed or paid: its next run goes to another owner. */
  failures?: TaskFailure[] | undefined;
  /** A copy verification added: the machine the market's draw names and its verifier, among how many machines it was drawn and when, when each verifier was first drawn, and the verifiers passed over (replicas.ts). */
  draw?: { machineId: string | null; verifier: string | null; at: number; machines: number; passed: string[]; drawnAt: Record<string, number> } | undefined;
}

/** A failed run of a task, waiting for a machine of another owner to reproduce it (costbenefit confirmedFailure). */
export interface TaskFailure {
  owner: string;
  machineId: string;
  /** The network its machine registered from, where known: a failure is confirmed only from another. */
  network: string | null;
  code: string;
  resultId: string;
  /** Its lease's piece rate: paid only once the failure is confirmed. */
  pieceMicro: bigint;
}

export interface LiveLease {
  id: string;
  taskId: string;
  jobId: string;
  machineId: string;
  issuedAt: number;
  /** Fixed when it was handed out (costbenefit leaseTerm); heartbeats do not move it. */
  expiresAt: number;
  /** What its run pays if accepted (a pilot's: the most it pays). */
  pieceRateMicro: bigint;
  pilot: boolean;
  /** Leases its machine held when it was issued: fewer than its slots, and it started at once. */
  ahead: number;
  /** A statement writing this lease's result is in the journal: its slot is as good as free, its report is being taken. */
  writing?: boolean | undefined;
}

/**
 * Values by id, with each group's values (by `groupOf`) beside them: the index is kept by the
 * map's own set and delete, the only ways a value joins or leaves, so it cannot drift from the
 * map. A group's values are in the order they joined, as the map's are.
 */
class GroupedMap<V> extends Map<string, V> {
  readonly #groups = new Map<string, Map<string, V>>();
  readonly #groupOf: (value: V) => string;

  constructor(groupOf: (value: V) => string) {
    super();
    this.#groupOf = groupOf;
  }

  override set(id: string, value: V): this {
    const before = super.get(id);
    if (before !== undefined && this.#groupOf(before) !== this.#groupOf(value)) {
      // Another group's value under this id: it joins anew, in both orders alike.
      this.#unindex(id, before);
      super.delete(id);
    }
    super.set(id, value);
    const key = this.#groupOf(value);
    let of = this.#groups.get(key);
    if (!of) this.#groups.set(key, (of = new Map()));
    of.set(id, value);
    return this;
  }

  override delete(id: string): boolean {
    const value = super.get(id);
    if (value === undefined) return false;
    this.#unindex(id, value);
    return super.delete(id);
  }

  override clear(): void {
    this.#groups.clear();
    super.clear();
  }

  protected group(key: string): V[] {
    const of = this.#groups.get(key);
    return of ? [...of.values()] : [];
  }

  protected groupKeys(): IterableIterator<string> {
    return this.#groups.keys();
  }

  #unindex(id: string, value: V): void {
    const key = this.#groupOf(value);
    const of = this.#groups.get(key);
    of?.delete(id);
    if (of?.size === 0) this.#groups.delete(key);
  }
}

/**
 * The live tasks by id, with each job's tasks beside them. A job's tasks are then found without
 * reading every task in the market (a delayed 10,000-task job asked again, a cancelled one; see
 * issue 16's fair service).
 */
export class TaskMap extends GroupedMap<LiveTask> {
  constructor() {
    super((task) => task.jobId);
  }

  /** The job's tasks (every copy), in the order they joined the market. */
  ofJob(jobId: string): LiveTask[] {
    return this.group(jobId);
  }

  /** The jobs that have tasks here. */
  jobIds(): IterableIterator<string> {
    return this.groupKeys();
  }
}

/**
 * The live leases by id, with each task's beside them: a job's end finds its leases through its
 * tasks instead of reading every lease in the market (up to twice the slots of every machine, for
 * each of the tens of jobs a second that end under the mixed load).
 */
export class LeaseMap extends GroupedMap<LiveLease> {
  /** What the live leases of each job will pay if their results are accepted (the job's budget check). */
  readonly #promised = new Map<string, bigint>();

  constructor() {
    super((lease) => lease.taskId);
  }

  override set(id: string, lease: LiveLease): this {
    const before = super.get(id);
    if (before) this.#promise(before.jobId, -before.pieceRateMicro);
    this.#promise(lease.jobId, lease.pieceRateMicro);
    return super.set(id, lease);
  }

  override delete(id: string): boolean {
    const before = super.get(id);
    if (before) this.#promise(before.jobId, -before.pieceRateMicro);
    return super.delete(id);
  }

  override clear(): void {
    this.#promised.clear();
    super.clear();
  }

  /** The pieces the job's live leases promise. */
  promised(jobId: string): bigint {
    return this.#promised.get(jobId) ?? 0n;
  }

  #promise(jobId: string, amount: bigint) {
    const next = (this.#promised.get(jobId) ?? 0n) + amount;
    if (next === 0n) this.#promised.delete(jobId);
    else this.#promised.set(jobId, next);
  }

  /** The task's leases (a task run again after an expiry can have had several; most have one). */
  ofTask(taskId: string): LiveLease[] {
    return this.group(taskId);
  }
}

/** Owners of jobs no longer live kept in memory, at most (LiveState.ownerOf). */
const ENDED_OWNERS_KEPT = 10_000;

export class LiveState {
  readonly machines = new Map<string, LiveMachine>();
  readonly jobs = new Map<string, LiveJob>();
  readonly tasks = new TaskMap();
  /** Producer accounts with machines here, or whose copies await a verdict: what verification reads (standing.ts). */
  readonly owners = new Map<string, LiveOwner>();
  readonly leases = new LeaseMap();
  /**
   * Leases that expired while their task was still undecided: a result reported under one is still
   * accepted if it is the task's first (its piece held for lateness). Gone with the task's decision.
   */
  readonly lateLeases = new Map<string, LiveLease>();
  /** Probes sent to dedicated machines and not answered yet, by their lease id (resources/probes.ts). */
  readonly probes = new Map<string, LiveProbe>();
  /** Tasks with failures no other owner reproduced yet: their next run must be another owner's, wherever they are queued. */
  readonly rerunsElsewhere = new Set<string>();
  /** Told of every task that joins a machine's queue, so the machine can hear there is work. */
  onQueued: ((machineId: string) => void) | null = null;
  /** Every machine a task was queued on since its queue was last seen empty (holders). */
  private mayHold = new Set<LiveMachine>();
  /** Owners of jobs no longer live, the most recent ENDED_OWNERS_KEPT (ownerOf). */
  private endedOwners = new Map<string, string>();

  /**
   * A job's owner as memory knows it: a live job's, or one that left memory lately (its page asks
   * a few more times once it finished, each a query of its own before these were kept). An owner
   * never changes, so a kept one is never stale.
   */
  ownerOf(jobId: string): string | undefined {
    return this.jobs.get(jobId)?.ownerId ?? this.endedOwners.get(jobId);
  }

  /** Keeps the owner of a job not live (read from PostgreSQL, or the job leaving memory); the oldest goes past ENDED_OWNERS_KEPT. */
  keepOwner(jobId: string, ownerId: string): void {
    this.endedOwners.set(jobId, ownerId);
    if (this.endedOwners.size > ENDED_OWNERS_KEPT) this.endedOwners.delete(this.endedOwners.keys().next().value!);
  }

  /** Puts a task at the back of a machine's queue, or leaves it pending when there is none. */
  enqueue(task: LiveTask, machineId: string | null): void {
    task.machineId = machineId;
    if (machineId) {
      task.state = "queued";
      const machine = this.machines.get(machineId);
      if (machine) {
        machine.queue.push(task.id);
        this.mayHold.add(machine);
      }
      this.onQueued?.(machineId);
    } else {
      task.state = "pending";
    }
  }

  /**
   * The machines holding queued tasks, without a walk over every machine: an idle machine looks
   * for work to take there at each lease, and with many machines the walk was most of a lease's
   * cost (bench:load --profile shows it in pickTasks). Machines are kept from their
   * first queued task and let go here once their queue is found empty or they left the market.
   */
  holders(): LiveMachine[] {
    const out: LiveMachine[] = [];
    for (const m of this.mayHold) {
      if (m.queue.length > 0 && this.machines.get(m.id) === m) out.push(m);
      else this.mayHold.delete(m);
    }
    return out;
  }

  /** Takes a queued task out of whichever queue holds it. */
  unqueue(task: LiveTask): void {
    if (task.state !== "queued" || !task.machineId) return;
    this.machines.get(task.machineId)?.queue.delete(task.id);
  }

  /** The expired leases of a task that is decided or gone: no late result of theirs can count any more. */
  forgetLate(taskId: string): void {
    if (this.lateLeases.size === 0) return;
    for (const [id, l] of this.lateLeases) if (l.taskId === taskId) this.lateLeases.delete(id);
  }

  /** The copies of a task (itself included), by id convention `${base}~${r}` (see replicaId). */
  copies(task: LiveTask): LiveTask[] {
    const k = this.jobs.get(task.jobId)?.replicas ?? 1;
    const base = baseTaskId(task.id);
    const out: LiveTask[] = [];
    // The consumer's k, then any verification added (costbenefit maxCopies bounds them).
    const most = task.replica >= k || this.tasks.has(replicaId(base, k)) ? maxCopies(k) : k;
    for (let r = 0; r < most; r++) {
      const copy = this.tasks.get(replicaId(base, r));
      if (copy) out.push(copy);
    }
    return out;
  }

  /** Tasks on no machine of jobs the engine took, job by job: a delayed job's tasks are not read. */
  pendingTasks(): LiveTask[] {
    return [...this.eachPending()];
  }

  /** Whether any task is pending, stopping at the first (the tick asks every second, and every machine that joins). */
  hasPendingTasks(): boolean {
    return !this.eachPending().next().done;
  }

  private *eachPending(): Generator<LiveTask> {
    for (const jobId of this.tasks.jobIds()) {
      if (this.jobs.get(jobId)?.status === "delayed") continue;
      for (const t of this.tasks.ofJob(jobId)) if (t.state === "pending") yield t;
    }
  }

  dropJob(jobId: string): void {
    for (const task of this.tasks.ofJob(jobId)) {
      this.tasks.delete(task.id);
      this.forgetLate(task.id);
      this.rerunsElsewhere.delete(task.id);
    }
    const job = this.jobs.get(jobId);
    if (job) this.keepOwner(jobId, job.ownerId);
    this.jobs.delete(jobId);
  }
}

/** Copy r of a task: the engine names replica r >= 1 of task t `${t}~${r}`. */
export const replicaId = (base: string, r: number) => (r === 0 ? base : `${base}~${r}`);
export const baseTaskId = (id: string) => {
  const at = id.indexOf("~");
  return at < 0 ? id : id.slice(0, at);
};
