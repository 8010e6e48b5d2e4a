// The task's clocks. Time is virtual so that a task's output depends only on its inputs and
// seed: it starts at VIRTUAL_EPOCH_NS, every read moves it on by VIRTUAL_TICK_NS (so loops
// that wait for time to pass end), and sleeping jumps it forward instead of waiting.
import { Clock } from "./constants.ts";

/** The wall-clock time every task starts at: 2025-01-01T00:00:00Z, in nanoseconds. */
export const VIRTUAL_EPOCH_NS = 1_735_689_600_000_000_000n;
/** Each clock read moves the virtual clock on by one microsecond. */
export const VIRTUAL_TICK_NS = 1_000n;

export class VirtualClock {
  /** Nanoseconds since the task started; shared by every clock id. */
  elapsedNs = 0n;

  static known(clockId: number): boolean {
    return clockId >= Clock.REALTIME && clockId <= Clock.THREAD_CPUTIME;
  }

  /** clock_time_get: the clock's value, one tick later than the last read. */
  read(clockId: number): bigint {
    this.elapsedNs += VIRTUAL_TICK_NS;
    return this.peek(clockId);
  }

  /** The clock's value without moving it (file time stamps, poll deadlines). */
  peek(clockId: number): bigint {
    return clockId === Clock.REALTIME ? VIRTUAL_EPOCH_NS + this.elapsedNs : this.elapsedNs;
  }

  realtime(): bigint {
    return this.peek(Clock.REALTIME);
  }
}
