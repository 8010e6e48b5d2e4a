// Machines stored column-wise in typed arrays (struct of arrays): about 130 bytes of numbers per
// machine and no object per machine (a profile is written out from its columns when asked for),
// rows reused after departures.
import type { MachineProfile } from "../machine.ts";

const F64 = [
  "speed", "slots", "memoryPerSlot", "bandwidth", "pricePerSecond", "capacity", "departureAt", "reputation",
  // 1 while the producer offers the machine's capacity, 0 while it is switched off.
  "available",
  // Backlog bookkeeping: remaining work as of `at`, drained at speed x min(running, slots).
  "work", "at", "queuedWork", "runningMemory",
  // A dedicated machine's contract price (its profile's; the search never reads it).
  "contractPrice",
] as const;
// owner: the number of its owner when the profile names one, else -1 (the machine is its own).
const I32 = ["running", "queued", "owner"] as const;
type F64Col = (typeof F64)[number];
type I32Col = (typeof I32)[number];

export class MachineTable {
  capacityLimit: number;
  f: Record<F64Col, Float64Array>;
  i: Record<I32Col, Int32Array>;
  ids: (string | undefined)[] = [];
  rowById = new Map<string, number>();
  /** Rows by named owner, so a replica's sibling can rule out every machine of the same owner. */
  private owners: { name: string; rows: number[] }[] = [];
  private ownerByName = new Map<string, number>();
  private freeOwners: number[] = [];
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
        this.growTo(Math.ceil(this.capacityLimit * 1.25));
        grew = true;
      }
      row = this.next++;
    }
    this.ids[row] = id;
    this.rowById.set(id, row);
    this.count++;
    for (const k of F64) this.f[k][row] = 0;
    for (const k of I32) this.i[k][row] = 0;
    this.i.owner[row] = -1;
    return { row, grew };
  }

  release(row: number): void {
    const id = this.ids[row];
    if (id !== undefined) this.rowById.delete(id);
    this.setOwner(row, undefined);
    this.ids[row] = undefined;
    this.free.push(row);
    this.count--;
  }

  setProfile(row: number, p: MachineProfile): void {
    const f = this.f;
    this.setOwner(row, p.owner);
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
    f.contractPrice[row] = p.kind === "dedicated" ? p.contractPrice : NaN;
  }

  /** The machine's profile as it was last set. */
  profile(row: number): MachineProfile {
    const f = this.f;
    const owner = this.i.owner[row]!;
    const common = {
      id: this.ids[row]!, slots: f.slots[row]!, speed: f.speed[row]!, memoryPerSlotMb: f.memoryPerSlot[row]!, bandwidthBytesPerSecond: f.bandwidth[row]!,
      reputation: f.reputation[row]!, ...(owner >= 0 ? { owner: this.owners[owner]!.name } : {}), available: f.available[row] === 1,
    };
    const contract = f.contractPrice[row]!;
    return contract === contract
      ? { ...common, kind: "dedicated", contractPrice: contract, departureAt: f.departureAt[row]! }
      : { ...common, kind: "opportunistic", pricePerSecond: f.pricePerSecond[row]! };
  }

  /** The rows of every live machine with the same owner as `row` (itself included). */
  sameOwner(row: number): Iterable<number> {
    const owner = this.i.owner[row]!;
    return owner >= 0 ? this.owners[owner]!.rows : [row];
  }

  private setOwner(row: number, name: string | undefined): void {
    const old = this.i.owner[row]!;
    if (old >= 0 && this.owners[old]!.name === name) return;
    if (old >= 0) {
      const o = this.owners[old]!;
      o.rows.splice(o.rows.indexOf(row), 1);
      if (o.rows.length === 0) {
        this.ownerByName.delete(o.name);
        this.freeOwners.push(old);
      }
    }
    this.i.owner[row] = -1;
    if (name === undefined) return;
    let k = this.ownerByName.get(name);
    if (k === undefined) {
      k = this.freeOwners.pop() ?? this.owners.length;
      this.owners[k] = { name, rows: [] };
      this.ownerByName.set(name, k);
    }
    const rows = this.owners[k]!.rows;
    rows.push(row);
    this.i.owner[row] = k;
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
