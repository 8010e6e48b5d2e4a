import { EventEmitter } from "node:events";
import type { Db } from "../db/client.ts";
import type { Clock, Log } from "../services.ts";
import type { Engine } from "./engine.ts";
import { LiveState, type LiveMachine } from "./live.ts";

export interface MarketSettings {
  leaseTimeoutMs: number;
  /** How many times a task may fail or be lost before its job fails. */
  maxAttempts: number;
  /** Credits the market gives a new consumer, in micro-credits. */
  startingCreditsMicro: bigint;
}

export type MarketEvent =
  | { kind: "job"; jobId: string; ownerId: string }
  | { kind: "machine"; machineId: string };

/**
 * The Market Manager's live market: the state in memory, the engine that decides, and a lock
 * that makes every change a single step (one decision-maker, seed 003 section 4.4).
 */
export class Market {
  readonly state = new LiveState();
  readonly events = new EventEmitter();
  private tail: Promise<unknown> = Promise.resolve();
  /** The admin's settings in force (see settings.ts); set at start. */
  adminSettings!: import("./settings.ts").AdminSettings;

  constructor(
    readonly db: Db,
    readonly engine: Engine,
    readonly clock: Clock,
    readonly log: Log,
    readonly settings: MarketSettings,
  ) {
    this.events.setMaxListeners(0);
  }

  /** Runs `step` after every step before it has finished, so state changes never interleave. */
  serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.tail.then(step, step);
    this.tail = run.catch(() => {});
    return run;
  }

  emit(event: MarketEvent): void {
    this.events.emit("event", event);
  }

  addMachine(machine: LiveMachine): void {
    this.state.machines.set(machine.id, machine);
    this.engine.addMachine(machine, this.clock.now());
  }
}
