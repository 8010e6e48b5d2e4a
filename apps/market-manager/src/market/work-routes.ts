import type { MarketEvent } from "./market-event.ts";
import { offeredSlots, type LiveMachine, type LiveState } from "./live.ts";

/** Queued tasks a machine cannot start itself right now: an idle machine may take them (rebalancing). */
export const spare = (m: LiveMachine) => Math.max(0, m.queue.length - Math.max(0, offeredSlots(m) - m.leases.size));

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

  constructor(private market: { readonly state: LiveState }) {}

  /** A stream listens for its machine; the returned function stops it. */
  watch(machineId: string, wake: () => void): () => void {
    let set = this.streams.get(machineId);
    if (!set) this.streams.set(machineId, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.streams.get(machineId) === set) {
        this.streams.delete(machineId);
        this.idle.delete(machineId);
      }
    };
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

  route(event: MarketEvent) {
    if (event.kind === "machine") this.wake(event.machineId);
    if (event.kind !== "queue") return;
    for (const id of event.machineIds) this.wake(id);
    if (this.idle.size === 0) return;
    let spareTasks = 0;
    for (const id of event.machineIds) {
      const m = this.market.state.machines.get(id);
      if (m) spareTasks += spare(m);
    }
    // Each idle machine woken takes about its room; wake until the spare tasks are spoken for.
    for (const id of this.idle) {
      if (spareTasks <= 0) break;
      const m = this.market.state.machines.get(id);
      if (!m) continue;
      spareTasks -= Math.max(1, offeredSlots(m) * 2 - m.leases.size);
      this.idle.delete(id);
      this.wake(id);
    }
  }

  private wake(machineId: string) {
    for (const wake of this.streams.get(machineId) ?? []) wake();
  }
}
