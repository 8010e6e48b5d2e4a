// The tasks queued and running on the machines, stored column-wise: a market of 100,000 machines
// holds millions of them, and one object per task (with its id string and a map entry) cost more
// than everything the market keeps per machine. A task is a slot: numbers in typed arrays, its id's
// characters in a byte pool found through an open-addressing hash table, its job by number.
// Slots are only appended, so they iterate in the order tasks were assigned (as a Map's entries
// did: policies that sum over tasks add them up in the same order); freed slots are squeezed out
// when the columns would otherwise grow. Each machine's tasks form a list (newest first) whose
// finished entries are unlinked the next time the list is read.
import type { PendingTask } from "../job.ts";

/** A task as policies read it: a copy of its slot (changing it changes nothing). */
export interface TaskRecord {
  readonly id: string;
  readonly jobId: string;
  readonly machine: number;
  readonly work: number;
  readonly memoryMb: number;
  readonly bytes: number;
  readonly running: boolean;
  readonly startedAt: number;
}

const EMPTY = 0;
const GONE = -1;

function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < id.length; k++) h = Math.imul(h ^ id.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

function grownF64(a: Float64Array, n: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(n);
  b.set(a.subarray(0, Math.min(a.length, n)));
  return b;
}

function grownI32(a: Int32Array, n: number, fill = 0): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n);
  if (fill !== 0) b.fill(fill);
  b.set(a.subarray(0, Math.min(a.length, n)));
  return b;
}

export class TaskTable {
  work = new Float64Array(0);
  memoryMb = new Float64Array(0);
  bytes = new Float64Array(0);
  /** When a running task started; NaN while it is queued. */
  startedAt = new Float64Array(0);
  /** The machine row, or -1 once the task has left. */
  machine = new Int32Array(0);
  /** Next slot in its machine's list. */
  private next = new Int32Array(0);
  private job = new Int32Array(0);
  /** Where the id starts in the pool. */
  private idAt = new Int32Array(0);
  /** First slot of each machine's list, by machine row. */
  private head = new Int32Array(0);
  private end = 0;
  /** Tasks on the machines. */
  size = 0;
  /** The ids: a varint of (length x 2 + wide), then the characters, one byte each or two if any is wide. */
  private pool = new Uint8Array(0);
  private poolEnd = 0;
  /** slot + 1, EMPTY or GONE. */
  private table = new Int32Array(8);
  private used = 0;
  private jobIds: (string | undefined)[] = [];
  private jobTasks: number[] = [];
  private jobByName = new Map<string, number>();
  private freeJobs: number[] = [];

  /** Room for machine rows below `rows`. */
  machines(rows: number): void {
    if (rows <= this.head.length) return;
    this.head = grownI32(this.head, Math.max(rows, Math.ceil(this.head.length * 1.25), 64), -1);
  }

  has(id: string): boolean {
    return this.indexOf(id) >= 0;
  }

  get(id: string): TaskRecord | undefined {
    const s = this.indexOf(id);
    return s < 0 ? undefined : this.record(s);
  }

  *values(): IterableIterator<TaskRecord> {
    for (let s = 0; s < this.end; s++) if (this.machine[s]! >= 0) yield this.record(s);
  }

  *keys(): IterableIterator<string> {
    for (let s = 0; s < this.end; s++) if (this.machine[s]! >= 0) yield this.idOf(s);
  }

  record(s: number): TaskRecord {
    const started = this.startedAt[s]!;
    return {
      id: this.idOf(s), jobId: this.jobIds[this.job[s]!]!, machine: this.machine[s]!, work: this.work[s]!, memoryMb: this.memoryMb[s]!, bytes: this.bytes[s]!,
      running: started === started, startedAt: started === started ? started : 0,
    };
  }

  running(s: number): boolean {
    const t = this.startedAt[s]!;
    return t === t;
  }

  jobOf(s: number): string {
    return this.jobIds[this.job[s]!]!;
  }

  /** The slot of task `id`, or -1. */
  indexOf(id: string): number {
    const table = this.table;
    const size = table.length;
    for (let k = this.home(hashOf(id), size); ; k = k + 1 === size ? 0 : k + 1) {
      const e = table[k]!;
      if (e === EMPTY) return -1;
      if (e !== GONE && this.idIs(e - 1, id)) return e - 1;
    }
  }

  /** A new task on machine `row`, queued; returns its slot. The caller has checked its id is new. */
  add(task: PendingTask, row: number): number {
    if (this.end === this.machine.length) this.makeRoom();
    if ((this.used + 1) * 5 > this.table.length * 4) this.rehash(Math.ceil((this.size + 1) / 0.65));
    const s = this.end++;
    this.work[s] = task.work;
    this.memoryMb[s] = task.memoryMb;
    this.bytes[s] = task.bytes;
    this.startedAt[s] = NaN;
    this.machine[s] = row;
    this.job[s] = this.jobNumber(task.jobId);
    this.idAt[s] = this.store(task.id);
    this.next[s] = this.head[row]!;
    this.head[row] = s;
    this.size++;
    this.place(s, hashOf(task.id));
    this.used++;
    return s;
  }

  /** The task left its machine (finished, failed, cancelled, or its machine left). */
  remove(s: number): void {
    const id = this.idOf(s);
    const table = this.table;
    const size = table.length;
    for (let k = this.home(hashOf(id), size); ; k = k + 1 === size ? 0 : k + 1) {
      const e = table[k]!;
      if (e === EMPTY) break;
      if (e === s + 1) {
        table[k] = GONE;
        break;
      }
    }
    const j = this.job[s]!;
    if (--this.jobTasks[j]! === 0) {
      this.jobByName.delete(this.jobIds[j]!);
      this.jobIds[j] = undefined;
      this.freeJobs.push(j);
    }
    // Left in its machine's list until that list is next read.
    this.machine[s] = -1;
    this.size--;
  }

  /** The task moves to machine `to`: out of its list now, first in the other's. */
  move(s: number, to: number): void {
    const from = this.machine[s]!;
    let prev = -1;
    for (let k = this.head[from]!; k >= 0; prev = k, k = this.next[k]!) {
      if (k !== s) continue;
      if (prev < 0) this.head[from] = this.next[k]!;
      else this.next[prev] = this.next[k]!;
      break;
    }
    this.machine[s] = to;
    this.next[s] = this.head[to]!;
    this.head[to] = s;
  }

  /** The slots of the tasks on machine `row`, newest first (finished ones unlinked on the way). */
  on(row: number): number[] {
    const out: number[] = [];
    let prev = -1;
    for (let k = this.head[row]!; k >= 0; k = this.next[k]!) {
      if (this.machine[k] === row) {
        out.push(k);
        prev = k;
      } else if (prev < 0) this.head[row] = this.next[k]!;
      else this.next[prev] = this.next[k]!;
    }
    return out;
  }

  /** Machine `row` left: its list is dropped (its tasks were removed first). */
  clearMachine(row: number): void {
    this.head[row] = -1;
  }

  idOf(s: number): string {
    const pool = this.pool;
    let at = this.idAt[s]!;
    let v = pool[at++]!;
    if (v & 0x80) v = (v & 0x7f) | (pool[at++]! << 7);
    const length = v >> 1;
    let out = "";
    if (v & 1) for (let k = 0; k < length; k++, at += 2) out += String.fromCharCode(pool[at]! | (pool[at + 1]! << 8));
    else for (let k = 0; k < length; k++) out += String.fromCharCode(pool[at++]!);
    return out;
  }

  private idIs(s: number, id: string): boolean {
    const pool = this.pool;
    let at = this.idAt[s]!;
    let v = pool[at++]!;
    if (v & 0x80) v = (v & 0x7f) | (pool[at++]! << 7);
    if (v >> 1 !== id.length) return false;
    if (v & 1) {
      for (let k = 0; k < id.length; k++, at += 2) if ((pool[at]! | (pool[at + 1]! << 8)) !== id.charCodeAt(k)) return false;
    } else {
      for (let k = 0; k < id.length; k++) if (pool[at++] !== id.charCodeAt(k)) return false;
    }
    return true;
  }

  /** Write an id into the pool; returns where it starts. */
  private store(id: string): number {
    let wide = 0;
    for (let k = 0; k < id.length; k++) if (id.charCodeAt(k) > 0xff) wide = 1;
    const v = id.length * 2 + wide;
    const need = (v < 0x80 ? 1 : 2) + id.length * (wide + 1);
    if (this.poolEnd + need > this.pool.length) {
      const p = new Uint8Array(Math.max(256, Math.ceil((this.poolEnd + need) * 1.125)));
      p.set(this.pool.subarray(0, this.poolEnd));
      this.pool = p;
    }
    const pool = this.pool;
    const start = this.poolEnd;
    let at = start;
    if (v < 0x80) pool[at++] = v;
    else {
      pool[at++] = 0x80 | (v & 0x7f);
      pool[at++] = v >> 7;
    }
    for (let k = 0; k < id.length; k++) {
      const c = id.charCodeAt(k);
      pool[at++] = c & 0xff;
      if (wide) pool[at++] = c >> 8;
    }
    this.poolEnd = at;
    return start;
  }

  private jobNumber(jobId: string): number {
    let j = this.jobByName.get(jobId);
    if (j === undefined) {
      j = this.freeJobs.pop() ?? this.jobIds.length;
      this.jobIds[j] = jobId;
      this.jobTasks[j] = 0;
      this.jobByName.set(jobId, j);
    }
    this.jobTasks[j]!++;
    return j;
  }

  private home(h: number, size: number): number {
    return Math.min(size - 1, Math.floor((h * size) / 4294967296));
  }

  private place(s: number, h: number): void {
    const table = this.table;
    const size = table.length;
    let k = this.home(h, size);
    while (table[k] !== EMPTY) k = k + 1 === size ? 0 : k + 1;
    table[k] = s + 1;
  }

  private rehash(size: number): void {
    this.table = new Int32Array(Math.max(8, size));
    this.used = 0;
    for (let s = 0; s < this.end; s++) {
      if (this.machine[s]! < 0) continue;
      this.place(s, hashOf(this.idOf(s)));
      this.used++;
    }
  }

  /** The columns are full: squeeze out the slots of tasks that left, or grow. */
  private makeRoom(): void {
    const free = this.end - this.size;
    if (free > 0 && free * 8 >= this.end) this.compact();
    if (this.end < this.machine.length) return;
    const n = Math.max(64, Math.ceil(this.machine.length * 1.125));
    this.work = grownF64(this.work, n);
    this.memoryMb = grownF64(this.memoryMb, n);
    this.bytes = grownF64(this.bytes, n);
    this.startedAt = grownF64(this.startedAt, n);
    this.machine = grownI32(this.machine, n);
    this.next = grownI32(this.next, n);
    this.job = grownI32(this.job, n);
    this.idAt = grownI32(this.idAt, n);
  }

  /** Renumber the tasks still here, in order; their lists, ids and hash table follow. */
  private compact(): void {
    const end = this.end;
    const to = new Int32Array(end).fill(-1);
    let n = 0;
    for (let s = 0; s < end; s++) if (this.machine[s]! >= 0) to[s] = n++;
    // Each machine's list in its order, through the new numbers.
    const next = new Int32Array(this.next.length);
    for (let row = 0; row < this.head.length; row++) {
      if (this.head[row]! < 0) continue;
      let last = -1;
      for (let k = this.head[row]!; k >= 0; k = this.next[k]!) {
        if (this.machine[k] !== row) continue;
        if (last < 0) this.head[row] = to[k]!;
        else next[last] = to[k]!;
        last = to[k]!;
      }
      if (last < 0) this.head[row] = -1;
      else next[last] = -1;
    }
    this.next = next;
    // The ids of the tasks still here, in a pool of their own.
    const pool = new Uint8Array(this.pool.length);
    let at = 0;
    for (let s = 0; s < end; s++) {
      const d = to[s]!;
      if (d < 0) continue;
      const from = this.idAt[s]!;
      let v = this.pool[from]!;
      const head = v & 0x80 ? 2 : 1;
      if (v & 0x80) v = (v & 0x7f) | (this.pool[from + 1]! << 7);
      const len = head + (v >> 1) * ((v & 1) + 1);
      pool.set(this.pool.subarray(from, from + len), at);
      this.idAt[d] = at;
      at += len;
      this.work[d] = this.work[s]!;
      this.memoryMb[d] = this.memoryMb[s]!;
      this.bytes[d] = this.bytes[s]!;
      this.startedAt[d] = this.startedAt[s]!;
      this.machine[d] = this.machine[s]!;
      this.job[d] = this.job[s]!;
    }
    this.pool = pool;
    this.poolEnd = at;
    this.end = n;
    this.rehash(Math.ceil(this.size / 0.65));
  }
}
