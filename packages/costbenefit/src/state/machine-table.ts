// Machines stored column-wise in typed arrays (struct of arrays): about 150 bytes of numbers per
// machine, no per-machine object on the hot path, and slots reused after departures.
import type { MachineProfile } from "../machine.ts";

const F64 = [
  "speed", "slots", "memoryPerSlot", "bandwidth", "pricePerSecond", "capacity", "departureAt", "reputation",
  // 1 while the producer offers the machine's capacity, 0 while it is switched off.
  "available",
  // Backlog bookkeeping: remaining work as of `at`, drained at speed x min(running, slots).
  "work", "at", "queuedWork", "runningMemory", "busySeconds",
] as const;
const I32 = ["running", "queued"] as const;
type F64Col = (typeof F64)[number];
type I32Col = (typeof I32)[number];

export class MachineTable {
  capacityLimit: number;
  f: Record<F64Col, Float64Array>;
  i: Record<I32Col, Int32Array>;
  ids: (string | undefined)[] = [];
  profiles: (MachineProfile | undefined)[] = [];
  bySlotId = new Map<string, number>();
  /** Slots by owner, so a replica's sibling can rule out every machine of the same owner. */
  private ownerOf: (string | undefined)[] = [];
  private byOwner = new Map<string, Set<number>>();
  private free: number[] = [];
  private next = 0;
  count = 0;

  constructor(initial = 64) {
    this.capacityLimit = initial;
    this.f = Object.fromEntries(F64.map((k) => [k, new Float64Array(initial)])) as Record<F64Col, Float64Array>;
    this.i = Object.fromEntries(I32.map((k) => [k, new Int32Array(initial)])) as Record<I32Col, Int32Array>;
  }

  /** Returns the slot and whether the arrays grew (callers grow their own side arrays). */
  allocate(id: string): { slot: number; grew: boolean } {
    let grew = false;
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.next === this.capacityLimit) {
        this.growTo(this.capacityLimit * 2);
        grew = true;
      }
      slot = this.next++;
    }
    this.ids[slot] = id;
    this.bySlotId.set(id, slot);
    this.count++;
    for (const k of F64) this.f[k][slot] = 0;
    for (const k of I32) this.i[k][slot] = 0;
    return { slot, grew };
  }

  release(slot: number): void {
    const id = this.ids[slot];
    if (id !== undefined) this.bySlotId.delete(id);
    this.setOwner(slot, undefined);
    this.ids[slot] = undefined;
    this.profiles[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  setProfile(slot: number, p: MachineProfile): void {
    const f = this.f;
    this.profiles[slot] = p;
    this.setOwner(slot, p.owner ?? `machine:${p.id}`);
    f.speed[slot] = p.speed;
    f.slots[slot] = p.slots;
    f.memoryPerSlot[slot] = p.memoryPerSlotMb;
    f.bandwidth[slot] = p.bandwidthBytesPerSecond;
    // A dedicated machine is prepaid by contract: using it costs no per-second payment.
    f.pricePerSecond[slot] = p.kind === "opportunistic" ? p.pricePerSecond : 0;
    f.capacity[slot] = p.speed * p.slots;
    f.departureAt[slot] = p.kind === "dedicated" ? p.departureAt : Infinity;
    f.reputation[slot] = p.reputation;
    f.available[slot] = p.available ? 1 : 0;
  }

  /** The slots of every live machine with the same owner as `slot` (itself included). */
  sameOwner(slot: number): Iterable<number> {
    const owner = this.ownerOf[slot];
    return (owner !== undefined && this.byOwner.get(owner)) || [slot];
  }

  private setOwner(slot: number, owner: string | undefined): void {
    const old = this.ownerOf[slot];
    if (old === owner) return;
    if (old !== undefined) {
      const set = this.byOwner.get(old)!;
      set.delete(slot);
      if (set.size === 0) this.byOwner.delete(old);
    }
    this.ownerOf[slot] = owner;
    if (owner !== undefined) {
      let set = this.byOwner.get(owner);
      if (!set) this.byOwner.set(owner, (set = new Set()));
      set.add(slot);
    }
  }

  /** Highest slot number ever used + 1: iterate 0..end and skip empty slots. */
  get end(): number {
    return this.next;
  }

  live(slot: number): boolean {
    return this.ids[slot] !== undefined;
  }

  /** Remaining work on the machine at `now`, assuming running tasks progress at full slot speed. */
  remaining(slot: number, now: number): number {
    const f = this.f;
    const drain = f.speed[slot]! * Math.min(this.i.running[slot]!, f.slots[slot]!);
    const r = f.work[slot]! - drain * Math.max(0, now - f.at[slot]!);
    return Math.max(f.queuedWork[slot]!, r, 0);
  }

  roll(slot: number, now: number): void {
    if (now <= this.f.at[slot]!) return;
    this.f.work[slot] = this.remaining(slot, now);
    this.f.at[slot] = now;
  }

  private growTo(n: number): void {
    for (const k of F64) {
      const a = new Float64Array(n);
      a.set(this.f[k]);
      this.f[k] = a;
    }
    for (const k of I32) {
      const a = new Int32Array(n);
      a.set(this.i[k]);
      this.i[k] = a;
    }
    this.capacityLimit = n;
  }
}
