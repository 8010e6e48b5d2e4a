import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { SettlementTerms } from "@cyclemarket/costbenefit";
import type { Db } from "../db/client.ts";
import type { Clock, Log } from "../services.ts";
import type { Engine } from "./engine.ts";
import { LiveState, type LiveMachine } from "./live.ts";

export interface MarketSettings {
  leaseTimeoutMs: number;
  /** How many times a task may fail or be lost before its job fails. */
  maxAttempts: number;
  /** Credits the market gives a new verified consumer, in micro-credits. */
  startingCreditsMicro: bigint;
  /** The engine's money rules in force: pay caps, penalty voiding (costbenefit SettlementTerms). */
  terms: SettlementTerms;
  /** A delayed job the market could not admit for this long is rejected (the engine's max-wait rule). */
  maxDelayMs: number;
}

export type MarketEvent =
  | { kind: "job"; jobId: string; ownerId: string }
  | { kind: "machine"; machineId: string }
  /** Tasks joined these machines' queues: placed, placed again, or moved. */
  | { kind: "queue"; machineIds: string[] };

/**
 * The Market Manager's live market: the state in memory, the engine that decides, and a lock
 * that makes every change a single step (one decision-maker, seed 003 section 4.4).
 */
export class Market {
  readonly state = new LiveState();
  readonly events = new EventEmitter();
  /** This process's run of the market, and the events emitted in it: together they name a version of the live state. */
  readonly run = randomUUID();
  revision = 0;
  private queuedOn = new Set<string>();
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
    this.state.onQueued = (machineId) => this.queued(machineId);
  }

  /** Runs `step` after every step before it has finished, so state changes never interleave. */
  serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.tail.then(step, step);
    this.tail = run.catch(() => {});
    return run;
  }

  emit(event: MarketEvent): void {
    this.revision += 1;
    this.events.emit("event", event);
  }

  /**
   * Tasks join queues in loops, after their transaction committed: one event once the loop is
   * done says which machines have new work.
   */
  private queued(machineId: string): void {
    if (this.queuedOn.size === 0) {
      queueMicrotask(() => {
        const machineIds = [...this.queuedOn];
        this.queuedOn.clear();
        this.emit({ kind: "queue", machineIds });
      });
    }
    this.queuedOn.add(machineId);
  }

  addMachine(machine: LiveMachine): void {
    this.state.machines.set(machine.id, machine);
    this.engine.addMachine(machine, this.clock.now());
  }
}
