// The CPU limit inside a task (wasm-pace.ts rewrites the module to call `cyclemarket.pace` every
// few thousand loop iterations). Each slot shares a small buffer with its thread: the limit in
// force (the producer may change it while the task runs), a cell the thread sleeps on, and the
// milliseconds it has rested in the current task (the pool adds them to the task's wall-time
// allowance: resting is the producer's choice, not the task's slowness).
import { restAfterMs } from "./duty-cycle.ts";

const LIMIT = 0;
const SLEEP = 1;
const RESTED = 2;

/** How long a paced task runs between two rests: short enough to look steady to the machine's owner. */
export const PACE_QUANTUM_MS = 100;

/**
 * Whether this host can pace inside a task: it needs SharedArrayBuffer and Atomics.wait (Node;
 * a browser page only when it is cross-origin isolated). Elsewhere the slot rests between tasks.
 */
export function pacingSupported(): boolean {
  return typeof SharedArrayBuffer === "function" && (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== false;
}

/** A slot's side of the buffer. */
export class SlotPacer {
  readonly cells = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));

  constructor(cpuLimit = 100) {
    this.setLimit(cpuLimit);
  }

  setLimit(cpuLimit: number): void {
    Atomics.store(this.cells, LIMIT, Math.min(100, Math.max(1, Math.round(cpuLimit))));
  }

  get limit(): number {
    return Atomics.load(this.cells, LIMIT);
  }

  /** A new task starts: nothing rested yet. */
  reset(): void {
    Atomics.store(this.cells, RESTED, 0);
  }

  /** Milliseconds the current task has rested so far. */
  rested(): number {
    return Atomics.load(this.cells, RESTED);
  }
}

/**
 * The thread's side: the `pace` import for one task and how long it rested. The task's run since
 * its last rest is measured when the module calls in; once it passes PACE_QUANTUM_MS the thread
 * sleeps for the rest the limit asks for (runMs x (100 - L) / L).
 */
export function threadPacer(cells: Int32Array, now: () => number = () => performance.now()) {
  let since = now();
  let restedMs = 0;
  return {
    pace(): void {
      const t = now();
      const limit = Atomics.load(cells, LIMIT);
      if (limit >= 100) {
        since = t;
        return;
      }
      const ran = t - since;
      if (ran < PACE_QUANTUM_MS) return;
      const rest = restAfterMs(ran, limit);
      // Counted before the sleep, so the pool's wall-time clock sees a rest that is under way.
      restedMs += rest;
      Atomics.add(cells, RESTED, Math.ceil(rest));
      Atomics.wait(cells, SLEEP, 0, rest);
      since = now();
    },
    restedMs: () => restedMs,
  };
}
