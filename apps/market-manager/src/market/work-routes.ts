import { idleTake, spareTasks } from "@cyclemarket/costbenefit";
import type { MarketEvent } from "./market-event.ts";
import { askOf, leaseRoomOf, offeredSlots, type LiveMachine, type LiveState } from "./live.ts";
import type { Lease } from "@cyclemarket/worker-runtime";
import type { MarketResources } from "./market-resources.ts";

/** Idle machines one event looks at, at most, for spare work: the cost of an event stays bounded. */
export const MAX_IDLE_LOOKS = 256;

/** Whether the engine lets an idle machine take a holder's spare queued work (resources/leases.ts pickTasks asks the same). */
const mayTake = (taker: LiveMachine, holder: LiveMachine) =>
  idleTake({ takerAsk: askOf(taker), holderAsk: askOf(holder), holderMayNotRun: false }).take;

/** Queued tasks a machine cannot start itself right now: an idle machine may take them (the engine's spareTasks). */
export const spare = (m: LiveMachine) => spareTasks({ queueLength: m.queue.length, offeredSlots: offeredSlots(m), leasesRunning: m.leases.size });

/** The market's spare queued tasks, counted once per version of the live state (the streams' offers and the lease calls that find nothing ask it). */
export function spareTotal(market: { readonly state: LiveState; readonly revision: number; readonly resources: Pick<MarketResources, "spareTasks"> }): number {
  const cached = market.resources.spareTasks;
  if (cached.revision === market.revision) return cached.value;
  let total = 0;
  for (const m of market.state.holders()) total += spare(m);
  market.resources.spareTasks = { revision: market.revision, value: total };
  return total;
}

/**
 * Which open work streams an event concerns. A stream is woken when its own machine's queue
 * grew or the machine left, and, when machines hold spare queued work, as many idle streams as
 * there are spare tasks: never every stream for every event, so the cost of an event does not
 * grow with the number of machines connected.
 */
export class WorkRoutes {
  private streams = new Map<string, Set<() => void>>();
  /** Machines whose stream last had nothing on offer, in the order they fell idle. */
  private idle = new Set<string>();
  /** Streams that take leases (WorkStreamRequest `lease`): the most each takes at once. */
  private leaseMax = new Map<() => void, number>();
  /** Leases made for a machine's stream, waiting for it to send them. */
  private pushed = new Map<string, Lease[]>();

  constructor(private market: { readonly state: LiveState }) {}

  /** A stream listens for its machine (taking up to `leaseMax` leases on it, if any); the returned function stops it. */
  watch(machineId: string, wake: () => void, leaseMax = 0): () => void {
    let set = this.streams.get(machineId);
    if (!set) this.streams.set(machineId, (set = new Set()));
    set.add(wake);
    if (leaseMax > 0) this.leaseMax.set(wake, leaseMax);
    return () => {
      set.delete(wake);
      this.leaseMax.delete(wake);
      if (set.size === 0 && this.streams.get(machineId) === set) {
        this.streams.delete(machineId);
        this.idle.delete(machineId);
        // Sent to nobody: their tasks go back to the market at its next tick.
        this.unsent(this.pushed.get(machineId) ?? []);
        this.pushed.delete(machineId);
      }
    };
  }

  /** The most leases the machine's open stream takes at once; 0 when none takes leases. */
  streamLeaseMax(machineId: string): number {
    let max = 0;
    for (const wake of this.streams.get(machineId) ?? []) max = Math.max(max, this.leaseMax.get(wake) ?? 0);
    return max;
  }

  /** Leases already made (committed) for the machine: its stream sends them at its next wake-up. */
  push(machineId: string, leases: Lease[]) {
    this.pushed.set(machineId, [...(this.pushed.get(machineId) ?? []), ...leases]);
    this.wake(machineId);
  }

  /**
   * Leases made for a stream that closed before it sent them: no worker holds them, so they
   * expire at the market's next tick (sweeper.ts) and their tasks are placed again, instead of
   * waiting out the lease timeout (30 s by default) as a lease whose worker went silent does.
   */
  unsent(leases: readonly Pick<Lease, "leaseId">[]) {
    for (const { leaseId } of leases) {
      const lease = this.market.state.leases.get(leaseId);
      if (lease) lease.expiresAt = 0;
      // A probe not sent is handed in the machine's next lease call instead (resources/probes.ts).
      const probe = this.market.state.probes.get(leaseId);
      if (probe) probe.sent = false;
    }
  }

  hasPushed(machineId: string): boolean {
    return this.pushed.has(machineId);
  }

  /** The leases waiting for the machine's stream, now taken by it. */
  takePushed(machineId: string): Lease[] {
    const leases = this.pushed.get(machineId) ?? [];
    this.pushed.delete(machineId);
    return leases;
  }

  /** Work streams open. */
  size(): number {
    let n = 0;
    for (const set of this.streams.values()) n += set.size;
    return n;
  }

  /** The stream found nothing on offer (true) or something (false). */
  markIdle(machineId: string, idle: boolean) {
    if (idle) this.idle.add(machineId);
    else this.idle.delete(machineId);
  }

  /**
   * The machine asked for tasks and got none: with a stream open, it is idle and is woken when
   * spare work comes, even if its stream last offered work (others took it first).
   */
  leasedNothing(machineId: string) {
    if (this.streams.has(machineId)) this.idle.add(machineId);
  }

  route(event: MarketEvent) {
    if (event.kind === "machine") this.wake(event.machineId);
    if (event.kind !== "queue") return;
    for (const id of event.machineIds) this.wake(id);
    if (this.idle.size === 0) return;
    const holders: LiveMachine[] = [];
    let spareTasks = 0;
    for (const id of event.machineIds) {
      const m = this.market.state.machines.get(id);
      const n = m ? spare(m) : 0;
      if (n > 0) (holders.push(m!), (spareTasks += n));
    }
    if (spareTasks === 0) return;
    // Each idle machine woken takes about its room; wake until the spare tasks are spoken for. A
    // machine is woken only when it could lease now and the engine lets it take from one of the
    // holders (idleTake: it asks no more than the holder); looking is bounded, so an event costs
    // the same however many machines idle.
    let looked = 0;
    for (const id of this.idle) {
      if (spareTasks <= 0 || looked++ >= MAX_IDLE_LOOKS) break;
      const m = this.market.state.machines.get(id);
      const room = m ? leaseRoomOf(m) : 0;
      if (!m || room <= 0) {
        // It can lease nothing now; any change to it (resumed, a task done) is its own event.
        this.idle.delete(id);
        continue;
      }
      if (!holders.some((h) => h.id !== id && mayTake(m, h))) {
        // Not this work: to the back, so the machines behind it are looked at next time.
        this.idle.delete(id);
        this.idle.add(id);
        continue;
      }
      spareTasks -= room;
      this.idle.delete(id);
      this.wake(id);
    }
  }

  private wake(machineId: string) {
    for (const wake of this.streams.get(machineId) ?? []) wake();
  }
}
