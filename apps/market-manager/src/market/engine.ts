// The one place the service talks to the cost-benefit engine. The engine decides; this file
// only translates between the live market's records and the engine's inputs and outputs.
import type { LiveMachine } from "./live.ts";

export interface TaskDemand {
  id: string;
  work: number;
  memoryMb: number;
  bytes: number;
}

export interface JobSpec {
  id: string;
  arrivedAt: number;
  tasks: TaskDemand[];
  benefit: unknown;
  /** Copies of each task, each on a different machine. */
  replicas: number;
}

export type Reason = { code: string; [detail: string]: unknown };

export type Decision =
  | {
      outcome: "admitted";
      completionAt: number;
      price: number;
      /** What the price is made of (credits): producers' expected payments, congestion, the market's fee. */
      priceParts?: { producerPayments: number; congestion: number; fee: number } | undefined;
      /** Where each task goes; the engine's marginal cost (credits) and expected finish (seconds) there, when it gives them. */
      placements: { taskId: string; machineId: string; marginalCost?: number; expectedFinishAt?: number }[];
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

export interface Engine {
  /** Changes the engine's settings or policy at run time (admin). */
  configure(config: EngineConfig): void;
  addMachine(machine: LiveMachine, now: number): void;
  /** The dedicated-machine purchase rule: accept or refuse the offer at once. */
  considerOffer(machine: LiveMachine, now: number, budget: number): { accept: boolean; reasons: Reason[] };
  removeMachine(machineId: string): void;
  /** The market's answer to a job, without committing anything. */
  decide(job: JobSpec, now: number): Decision;
  /** Makes an admitted decision part of the engine's view of the machines' loads. */
  commit(job: JobSpec, decision: Decision & { outcome: "admitted" }): void;
  /** Chooses machines for tasks that lost theirs (departures, expired leases, failures). */
  place(tasks: TaskDemand[], now: number): Map<string, string | null>;
  /** Tells the engine about tasks already placed on a machine (rebuilding after a restart). */
  assume(tasks: TaskDemand[], machineId: string): void;
  taskStarted(taskId: string, machineId: string, now: number): void;
  taskFinished(taskId: string, machineId: string, seconds: number, now: number): void;
  taskMoved(taskId: string, fromMachineId: string, toMachineId: string): void;
  taskDropped(taskId: string): void;
  /** Moves of placed tasks the policy wants now (rebalancing), not yet applied. */
  proposeMoves(now: number): { taskId: string; fromMachineId: string; toMachineId: string; reasons: Reason[] }[];
}
