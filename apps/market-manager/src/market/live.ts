// The live market held in memory by the one Market Manager process. Every change to it is
// made after the same change is committed to PostgreSQL, so it can always be rebuilt from there.

export type TaskState = "pending" | "queued" | "leased" | "done" | "failed";

export interface LiveMachine {
  id: string;
  ownerId: string;
  name: string;
  kind: "opportunistic" | "dedicated";
  slots: number;
  speed: number;
  memoryPerSlotMb: number;
  pricePerSecondMicro: bigint;
  /** Dedicated machines: the contract's total price and when the machine leaves (ms). */
  contractPriceMicro: bigint | null;
  departsAt: number | null;
  /** Tasks placed on this machine and not yet leased, in the order they will be handed out. */
  queue: string[];
  leases: Set<string>;
  lastHeartbeatAt: number;
}

export interface LiveJob {
  id: string;
  ownerId: string;
  moduleHash: string;
  example: string | null;
  status: "delayed" | "admitted" | "running";
  taskCount: number;
  tasksDone: number;
  workPerTask: number;
  memoryMbPerTask: number;
  arrivedAt: number;
  /** The job's BenefitCurve, kept for re-evaluation while the job is delayed. */
  benefit: unknown;
}

export interface LiveTask {
  id: string;
  jobId: string;
  index: number;
  machineId: string | null;
  state: TaskState;
  attempts: number;
}

export interface LiveLease {
  id: string;
  taskId: string;
  machineId: string;
  expiresAt: number;
}

export class LiveState {
  readonly machines = new Map<string, LiveMachine>();
  readonly jobs = new Map<string, LiveJob>();
  readonly tasks = new Map<string, LiveTask>();
  readonly leases = new Map<string, LiveLease>();

  /** Puts a task at the back of a machine's queue, or leaves it pending when there is none. */
  enqueue(task: LiveTask, machineId: string | null): void {
    task.machineId = machineId;
    if (machineId) {
      task.state = "queued";
      this.machines.get(machineId)?.queue.push(task.id);
    } else {
      task.state = "pending";
    }
  }

  /** Takes a queued task out of whichever queue holds it. */
  unqueue(task: LiveTask): void {
    if (task.state !== "queued" || !task.machineId) return;
    const queue = this.machines.get(task.machineId)?.queue;
    const at = queue?.indexOf(task.id) ?? -1;
    if (queue && at >= 0) queue.splice(at, 1);
  }

  pendingTasks(): LiveTask[] {
    return [...this.tasks.values()].filter((t) => t.state === "pending" && this.jobs.get(t.jobId)?.status !== "delayed");
  }

  dropJob(jobId: string): void {
    for (const [id, task] of this.tasks) if (task.jobId === jobId) this.tasks.delete(id);
    this.jobs.delete(jobId);
  }
}
