// The physical cluster of the TPDS 2000 study: each machine time-shares its CPU fairly among
// the tasks on it, and runs 10 times slower while their memory exceeds its own. Processor
// sharing is simulated with a per-machine "attained service" clock: every task on a machine
// has received the same service since it arrived there, so a task finishes when the clock
// reaches its arrival reading plus its remaining work.

/** A machine whose memory is over capacity runs this many times slower (thrashing). */
export const THRASH_FACTOR = 10;

export class Cluster {
  readonly speed: Float64Array;
  readonly memoryMb: Float64Array;
  readonly memoryUsed: Float64Array;
  private service: Float64Array;
  private since: Float64Array;
  readonly tasks: number[][];
  /** Per task (global index): machine, service clock reading at which it finishes, memory. */
  taskMachine: Int32Array;
  taskFinish: Float64Array;
  taskMemory: Float64Array;
  /** CPU work done on each machine (for utilisation and producer payments). */
  readonly workDone: Float64Array;
  /** Machine-seconds spent over memory capacity (thrashing), summed over machines. */
  thrashSeconds = 0;

  constructor(speed: number[], memoryMb: number[], taskCount: number) {
    const n = speed.length;
    this.speed = Float64Array.from(speed);
    this.memoryMb = Float64Array.from(memoryMb);
    this.memoryUsed = new Float64Array(n);
    this.service = new Float64Array(n);
    this.since = new Float64Array(n);
    this.workDone = new Float64Array(n);
    this.tasks = Array.from({ length: n }, () => []);
    this.taskMachine = new Int32Array(taskCount).fill(-1);
    this.taskFinish = new Float64Array(taskCount);
    this.taskMemory = new Float64Array(taskCount);
  }

  /** Service per task per second on machine m right now. */
  rate(m: number): number {
    const k = this.tasks[m]!.length;
    if (k === 0) return 0;
    const r = this.speed[m]! / k;
    return this.memoryUsed[m]! > this.memoryMb[m]! ? r / THRASH_FACTOR : r;
  }

  advance(m: number, t: number): void {
    const dt = t - this.since[m]!;
    if (dt > 0) {
      const r = this.rate(m);
      this.service[m]! += r * dt;
      this.workDone[m]! += r * dt * this.tasks[m]!.length;
      if (this.memoryUsed[m]! > this.memoryMb[m]!) this.thrashSeconds += dt;
    }
    this.since[m] = t;
  }

  add(m: number, task: number, work: number, memoryMb: number, t: number): void {
    this.advance(m, t);
    this.tasks[m]!.push(task);
    this.taskMachine[task] = m;
    this.taskFinish[task] = this.service[m]! + work;
    this.taskMemory[task] = memoryMb;
    this.memoryUsed[m]! += memoryMb;
  }

  /** Take a task off its machine; returns its remaining work. */
  remove(task: number, t: number): number {
    const m = this.taskMachine[task]!;
    this.advance(m, t);
    const list = this.tasks[m]!;
    const i = list.indexOf(task);
    list[i] = list[list.length - 1]!;
    list.pop();
    this.memoryUsed[m]! -= this.taskMemory[task]!;
    if (list.length === 0) this.memoryUsed[m] = 0;
    this.taskMachine[task] = -1;
    return Math.max(0, this.taskFinish[task]! - this.service[m]!);
  }

  remaining(task: number, t: number): number {
    const m = this.taskMachine[task]!;
    this.advance(m, t);
    return Math.max(0, this.taskFinish[task]! - this.service[m]!);
  }

  /** Total remaining work on machine m at time t. */
  backlog(m: number, t: number): number {
    this.advance(m, t);
    let sum = 0;
    for (const task of this.tasks[m]!) sum += Math.max(0, this.taskFinish[task]! - this.service[m]!);
    return sum;
  }

  /**
   * The delay machine m would impose on a newcomer of `work` units, in nominal work units: under
   * fair time sharing each task ahead delays it by at most its own remaining work or the
   * newcomer's, and a thrashing machine delivers a tenth of its speed. This is what a machine's
   * measured progress tells the market in place of a FIFO backlog.
   */
  sharedBacklog(m: number, t: number, work: number): number {
    this.advance(m, t);
    let sum = 0;
    for (const task of this.tasks[m]!) sum += Math.min(work, Math.max(0, this.taskFinish[task]! - this.service[m]!));
    return this.memoryUsed[m]! > this.memoryMb[m]! ? sum * THRASH_FACTOR : sum;
  }

  /** When the next task on m finishes if nothing changes, and which one (-1 when idle). */
  nextCompletion(m: number): { time: number; task: number } {
    const list = this.tasks[m]!;
    if (list.length === 0) return { time: Infinity, task: -1 };
    let best = list[0]!;
    for (const task of list) if (this.taskFinish[task]! < this.taskFinish[best]!) best = task;
    const r = this.rate(m);
    return { time: this.since[m]! + Math.max(0, this.taskFinish[best]! - this.service[m]!) / r, task: best };
  }
}
