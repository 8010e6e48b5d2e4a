// The one place the service talks to the cost-benefit engine. The engine decides; this file
// only translates between the live market's records and the engine's inputs and outputs. The
// vocabulary is the engine's own (its Reason union, its task demand); the one translation is of
// time: the engine counts seconds on the market's clock, the service and the wire milliseconds
// since the epoch, so every instant in a decision or a reason leaves here in milliseconds.
import type { AccountCeiling, Asked, BenefitCurve, MarketReason, PendingTask, PilotRun, SettlementTerms, WorkPrice } from "@cyclemarket/costbenefit";
import type { LiveJob, LiveMachine, LiveTask } from "./live.ts";

/** Any reason the market gives: the engine's, or the service's own (vocabulary.ts). */
export type Reason = MarketReason;

/** A task as the engine sees it: its id, its job, and its demand. */
export type TaskDemand = PendingTask;

/** The demand of one task of a live job, as the engine knows it. */
export function demandOf(task: Pick<LiveTask, "id" | "jobId" | "bytes">, job: Pick<LiveJob, "workPerTask" | "memoryMbPerTask">): TaskDemand {
  return { id: task.id, jobId: task.jobId, work: job.workPerTask, memoryMb: job.memoryMbPerTask, bytes: task.bytes };
}

export interface JobSpec {
  id: string;
  /** Milliseconds since the epoch. */
  arrivedAt: number;
  tasks: Omit<TaskDemand, "jobId">[];
  benefit: BenefitCurve;
  /** Copies of each task, each on a different machine. */
  replicas: number;
}

/** Where one task copy goes and why it was chosen (the placement's explanation). */
export interface PlacementRecord {
  taskId: string;
  machineId: string;
  /** Milliseconds since the epoch. */
  expectedFinishAt: number;
  /** Credits: the congestion cost it adds plus the producer's expected pay. */
  marginalCost: number;
}

export type Decision =
  | {
      outcome: "admitted";
      /** Milliseconds since the epoch. */
      completionAt: number;
      price: number;
      /** What the price is made of (credits): producers' expected payments, congestion, the market's fee. */
      priceParts?: { producerPayments: number; congestion: number; fee: number } | undefined;
      /** The same placements priced at multiples of the declared work (costbenefit priceAtWork): what a contradicted estimate is charged. */
      priceAtWork?: WorkPrice[] | undefined;
      placements: PlacementRecord[];
      reasons: Reason[];
    }
  | { outcome: "delayed" | "rejected"; reasons: Reason[] };

export interface EngineConfig {
  horizonSeconds: number;
  priceConstant: number;
  policy: string;
  pricing: "posted" | "bid";
  feeFraction: number;
  maxDelaySeconds: number;
}

/** A move of a placed task the policy wants now, not yet applied. */
export interface MoveRecord {
  taskId: string;
  fromMachineId: string;
  toMachineId: string;
  reasons: Reason[];
}

/** The engine's periodic answer (its policy's tick), for the service to apply. */
export interface TickDecision {
  /** Delayed jobs to ask again now, in the order the policy wants them asked. */
  reevaluate: string[];
  /** Delayed jobs to give up on now, with the engine's reasons (max-wait-exceeded). */
  reject: { jobId: string; reasons: Reason[] }[];
  /** Moves of placed tasks (rebalancing). */
  moves: MoveRecord[];
}

export interface Engine {
  /** Changes the engine's settings or policy at run time (admin). */
  configure(config: EngineConfig): void;
  addMachine(machine: LiveMachine, now: number): void;
  /** The dedicated-machine purchase rule: accept or refuse the offer at once. */
  /** `account`: the offering account's contract ceiling and what its live contracts still promise it (credits). */
  considerOffer(machine: LiveMachine, now: number, budget: number, account?: AccountCeiling): { accept: boolean; reasons: Reason[] };
  removeMachine(machineId: string): void;
  /** The market's answer to a job, without committing anything. */
  decide(job: JobSpec, now: number): Decision;
  /** The same answer shown to a consumer before submitting: the policy learns nothing from it. */
  quote(job: JobSpec, now: number): Decision;
  /**
   * A job without a work estimate, step one (costbenefit pilots.ts): the engine's answer for its
   * first tasks as pilots at the provisional work its wall-time limit allows. `quote` commits nothing.
   */
  decidePilots(job: JobSpec, wallMs: number, terms: SettlementTerms, now: number, quote?: boolean): Decision;
  /**
   * Step two, once the pilots finished: the rest of the job (`job` holds only those tasks) planned
   * from the pilots' vouched runs, against the benefit the pilots' price leaves.
   */
  decideRemainder(job: JobSpec, pilots: { count: number; runs: PilotRun[]; priceCredits: number; terms: SettlementTerms }, wallMs: number, now: number): { decision: Decision; workPerTask: number };
  /** Whether a pilot job's rest that was `asked` (and not admitted) is put to the engine again now: the delayed jobs' backoff. */
  remainderDue(asked: Asked | undefined, now: number): boolean;
  /** The record of putting a pilot job's rest to the engine now. */
  remainderAsked(previous: Asked | undefined, now: number): Asked;
  /**
   * Makes a decision of `decide` part of the engine's state: an admitted job's tasks join their
   * machines' loads, a delayed job waits for the tick to ask again, a rejected one is forgotten.
   */
  commit(job: JobSpec, decision: Decision): void;
  /** Tells the engine of a job that waits delayed since `job.arrivedAt` (rebuilding after a restart). */
  assumeDelayed(job: JobSpec, now: number): void;
  /** A job the engine knew as delayed ended by the service's doing (cancelled, refused at escrow). */
  jobEnded(jobId: string): void;
  /** Chooses machines for tasks that lost theirs (departures, expired leases, failures). */
  place(tasks: TaskDemand[], now: number): Map<string, string | null>;
  /** Tells the engine about tasks already placed on a machine (rebuilding after a restart). */
  assume(tasks: TaskDemand[], machineId: string): void;
  taskStarted(taskId: string, machineId: string, now: number): void;
  taskFinished(taskId: string, machineId: string, seconds: number, now: number): void;
  taskMoved(taskId: string, fromMachineId: string, toMachineId: string): void;
  taskDropped(taskId: string): void;
  /** The policy's periodic decisions: delayed jobs to ask again or give up on, and moves. */
  tick(now: number): TickDecision;
}
