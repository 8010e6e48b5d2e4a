// Machines stored column-wise in typed arrays (struct of arrays): about 150 bytes of numbers per
// machine, no per-machine object on the hot path, and rows reused after departures.
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
  rowById = new Map<string, number>();
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

  /** Returns the row and whether the arrays grew (callers grow their own side arrays). */
  allocate(id: string): { row: number; grew: boolean } {
    let grew = false;
    let row = this.free.pop();
    if (row === undefined) {
      if (this.next === this.capacityLimit) {
        this.growTo(this.capacityLimit * 2);
        grew = true;
      }
      row = this.next++;
    }
    this.ids[row] = id;
    this.rowById.set(id, row);
    this.count++;
    for (const k of F64) this.f[k][row] = 0;
    for (const k of I32) this.i[k][row] = 0;
    return { row, grew };
  }

  release(row: number): void {
    const id = this.ids[row];
    if (id !== undefined) this.rowById.delete(id);
    this.setOwner(row, undefined);
    this.ids[row] = undefined;
    this.profiles[row] = undefined;
    this.free.push(row);
    this.count--;
  }

  setProfile(row: number, p: MachineProfile): void {
    const f = this.f;
    this.profiles[row] = p;
    this.setOwner(row, p.owner ?? `machine:${p.id}`);
    f.speed[row] = p.speed;
    f.slots[row] = p.slots;
    f.memoryPerSlot[row] = p.memoryPerSlotMb;
    f.bandwidth[row] = p.bandwidthBytesPerSecond;
    // A dedicated machine is prepaid by contract: using it costs no per-second payment.
    f.pricePerSecond[row] = p.kind === "opportunistic" ? p.pricePerSecond : 0;
    f.capacity[row] = p.speed * p.slots;
    f.departureAt[row] = p.kind === "dedicated" ? p.departureAt : Infinity;
    f.reputation[row] = p.reputation;
    f.available[row] = p.available ? 1 : 0;
  }

  /** The rows of every live machine with the same owner as `row` (itself included). */
  sameOwner(row: number): Iterable<number> {
    const owner = this.ownerOf[row];
    return (owner !== undefined && this.byOwner.get(owner)) || [row];
  }

  private setOwner(row: number, owner: string | undefined): void {
    const old = this.ownerOf[row];
    if (old === owner) return;
    if (old !== undefined) {
      const set = this.byOwner.get(old)!;
      set.delete(row);
      if (set.size === 0) this.byOwner.delete(old);
    }
    this.ownerOf[row] = owner;
    if (owner !== undefined) {
      let set = this.byOwner.get(owner);
      if (!set) this.byOwner.set(owner, (set = new Set()));
      set.add(row);
    }
  }

  /** Highest row ever used + 1: iterate 0..end and skip empty rows. */
  get end(): number {
    return this.next;
  }

  live(row: number): boolean {
    return this.ids[row] !== undefined;
  }

  /** Remaining work on the machine at `now`, assuming running tasks progress at full slot speed. */
  remaining(row: number, now: number): number {
    const f = this.f;
    const drain = f.speed[row]! * Math.min(this.i.running[row]!, f.slots[row]!);
    const r = f.work[row]! - drain * Math.max(0, now - f.at[row]!);
    return Math.max(f.queuedWork[row]!, r, 0);
  }

  roll(row: number, now: number): void {
    if (now <= this.f.at[row]!) return;
    this.f.work[row] = this.remaining(row, now);
    this.f.at[row] = now;
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
