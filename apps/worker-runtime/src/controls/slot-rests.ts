// The CPU limit's duty cycle in the producer loop (duty-cycle.ts): a slot that ran a task rests
// before it takes the next one. The loop counts resting slots as busy.
import { restAfterMs } from "./duty-cycle.ts";

export class SlotRests {
  private ends: number[] = [];

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** A slot ran a task for `runMs` under `cpuLimit` percent: it rests for the matching time. */
  afterRun(runMs: number, cpuLimit: number): void {
    const rest = restAfterMs(runMs, cpuLimit);
    if (rest > 0) this.ends.push(this.now() + rest);
  }

  /** Slots resting now. */
  resting(): number {
    const t = this.now();
    this.ends = this.ends.filter((end) => end > t);
    return this.ends.length;
  }

  /** Milliseconds until the next slot wakes, or null when none rests. */
  nextWakeInMs(): number | null {
    if (this.resting() === 0) return null;
    return Math.max(0, Math.min(...this.ends) - this.now());
  }

  clear(): void {
    this.ends = [];
  }
}
