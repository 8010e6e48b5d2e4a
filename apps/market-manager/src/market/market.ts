import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { SettlementTerms } from "@cyclemarket/costbenefit";
import type { Database, Db } from "../db/client.ts";
import type { Clock } from "../clock.ts";
import type { Log } from "../log.ts";
import type { AdminSettings } from "./admin-settings.ts";
import type { MarketEvent } from "./market-event.ts";
import type { Engine } from "./engine.ts";
import { LiveState } from "./live.ts";
import { Liveness } from "../resources/liveness.ts";
import { refuse } from "../api/errors.ts";
import { WorkRoutes } from "./work-routes.ts";
import { Journal } from "./journal.ts";
import { MarketResources } from "./market-resources.ts";
import type { VerificationSettings } from "./standing.ts";
import type { Managers } from "./managers.ts";

/** The Market Manager of a market run by one (and the name the first of several takes). */
export const DEFAULT_MANAGER_ID = "manager-1";

/** Steps run back to back at most this long before the event loop reads what arrived (Market.slice). */
export const STEP_SLICE_MS = 5;

/** Calls waiting for the market's lock beyond this many are refused with 503 and Retry-After, not queued for minutes. */
export const MAX_QUEUED_STEPS = 2000;

/** The Market Manager's own rules of operation (leases, attempts, grants, the money terms in force); the engine's are its MarketSettings. */
export interface ManagerSettings {
  /** A machine not heard for this long has departed. */
  leaseTimeoutMs: number;
  /** Credits the market gives a new verified consumer, in micro-credits. */
  startingCreditsMicro: bigint;
  /** The engine's money rules in force: leases, pieces, attempts, lateness (costbenefit SettlementTerms). */
  terms: SettlementTerms;
  /** A delayed job the market could not admit for this long is rejected (the engine's max-wait rule). */
  maxDelayMs: number;
  /** The secret seed of its spot checks, and whether every producer is trusted (market/standing.ts); none: an open market seeded by its run. */
  verification?: VerificationSettings;
}

export type { MarketEvent } from "./market-event.ts";

/** A caller's call waiting for the lock: whether its client has gone. */
type Caller = { signal?: Pick<AbortSignal, "aborted"> | undefined };

/**
 * The Market Manager's live market: the state in memory, the engine that decides, and a lock
 * that makes every change a single step (one decision-maker, the Java Market paper section 4.4). The hot steps
 * (reports, leases, admissions) hold the lock for their memory only and leave their statement to
 * the journal; every other step waits for the journal to be idle and runs alone.
 */
export class Market {
  readonly state = new LiveState();
  readonly events = new EventEmitter();
  /** This process's run of the market, and the events emitted in it: together they name a version of the live state. */
  readonly run = randomUUID();
  revision = 0;
  private queuedOn = new Set<string>();
  private tail: Promise<unknown> = Promise.resolve();
  /** Steps waiting for the lock or running. */
  queuedSteps = 0;
  /** Callers' calls past this many steps are refused with 503 and Retry-After (MAX_QUEUED_STEPS unless set). */
  maxQueuedSteps = MAX_QUEUED_STEPS;
  /** Heartbeats heard, written to PostgreSQL in batches (resources/liveness.ts). */
  readonly liveness: Liveness;
  /** Wakes the work streams of the machines an event concerns, not every stream (work-routes.ts). */
  readonly workRoutes = new WorkRoutes(this);
  /** The admin's settings in force (see settings.ts); set at start. */
  adminSettings!: AdminSettings;
  /** The hot steps' statements, run in the order decided, applied to memory as each commits (journal.ts). */
  readonly journal: Journal;
  /** The Market Manager this process is (MarketManager.id): the machines and jobs it holds name it. */
  managerId = DEFAULT_MANAGER_ID;
  /** The market's other managers as this one last saw them (managers.ts); null in a market run without its row (tests). */
  managers: Managers | null = null;
  /** The market's own downtime (ms since the epoch), read at start: the only lateness its account pays for. */
  outages: { startedAt: number; endedAt: number }[] = [];
  /** Everything else this market keeps: its ways to the database, metrics, caches and counts (market-resources.ts). */
  readonly resources: MarketResources;
  /** Prisma (resources.database.db): transactions and the ORM's reads and writes. */
  readonly db: Db;
  /** How results are verified (market/standing.ts). */
  readonly verification: VerificationSettings;

  constructor(
    database: Database,
    readonly engine: Engine,
    readonly clock: Clock,
    readonly log: Log,
    readonly settings: ManagerSettings,
  ) {
    this.events.setMaxListeners(0);
    this.resources = new MarketResources(database);
    this.db = database.db;
    this.liveness = new Liveness(this.db);
    this.verification = settings.verification ?? { seed: this.run, trustAll: false };
    this.journal = new Journal(log);
    this.state.onQueued = (machineId) => this.queued(machineId);
  }

  /**
   * Runs `step` alone: after every step before it has finished and every statement of the
   * journal has been applied, so state changes never interleave and the step sees memory as the
   * database has it. A caller's call (`from`) is refused at once when too many wait already, and
   * dropped unrun when its client has gone by the time its turn comes; the market's own steps
   * always run.
   */
  serial<T>(step: () => Promise<T>, from?: Caller): Promise<T> {
    return this.enqueue(async () => {
      await this.journal.idle();
      if (from?.signal?.aborted) throw refuse.gone();
      return step();
    }, from);
  }

  /**
   * Runs a hot step after every step before it, without waiting for the journal: `step` decides
   * from memory, synchronously, and hands its statement to the journal (whose entry moves memory
   * once it committed). The lock is held for the step's memory work only.
   */
  pipelined<T>(step: () => T, from?: Caller): Promise<T> {
    return this.enqueue(async () => {
      if (from?.signal?.aborted) throw refuse.gone();
      return step();
    }, from);
  }

  /** When the steps running back to back in this turn of the event loop began; undefined between turns. */
  private sliceStart: number | undefined;

  /**
   * Before a step: once steps have run back to back for STEP_SLICE_MS, the event loop gets a turn
   * first (what arrived meanwhile is read: calls, connections, PostgreSQL's answers), so a burst
   * of queued decisions does not hold every other call of the market for its whole length.
   */
  private slice = (): Promise<void> | undefined => {
    if (this.sliceStart === undefined) return void this.beginSlice();
    if (performance.now() - this.sliceStart < STEP_SLICE_MS) return undefined;
    return new Promise((resolve) => setImmediate(() => (this.beginSlice(), resolve())));
  };

  /** Steps start running back to back now, until this turn of the event loop ends. */
  private beginSlice() {
    this.sliceStart = performance.now();
    setImmediate(() => (this.sliceStart = undefined));
  }

  private enqueue<T>(step: () => Promise<T>, from: Caller | undefined): Promise<T> {
    if (from) {
      try {
        this.refuseWhenBusy();
      } catch (e) {
        return Promise.reject(e);
      }
    }
    this.queuedSteps += 1;
    const guarded = async () => {
      try {
        return await step();
      } finally {
        this.queuedSteps -= 1;
      }
    };
    const run = this.tail.then(this.slice, this.slice).then(guarded, guarded);
    this.tail = run.catch(() => {});
    return run;
  }

  /**
   * Refuses a caller's call (503, Retry-After) when `waiting` more calls on top of the queued steps
   * would pass the bound: the report group's waiting calls count as well as the lock's own queue.
   */
  refuseWhenBusy(waiting = 0): void {
    const max = this.maxQueuedSteps;
    if (this.queuedSteps + waiting >= max) {
      throw refuse.busy({ code: "market-busy", limit: "queued-calls", max, retryAfterSeconds: 1 }, "The market is busy; try again in a second.");
    }
  }

  emit(event: MarketEvent): void {
    this.revision += 1;
    this.events.emit("event", event);
    this.workRoutes.route(event);
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
}
