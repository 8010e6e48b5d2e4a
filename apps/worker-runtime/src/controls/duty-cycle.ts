// The CPU limit: a producer lets the market use a percentage of each core, by duty cycle: after
// running r ms a core rests r x (100 - L) / L ms, so it is busy L% of the time. Inside a task the
// paced module rests every 100 ms it computes (wasm-pace.ts, pacer.ts); where the host cannot pace
// (no SharedArrayBuffer) the slot rests after each task instead (slot-rests.ts). The market is
// offered speed x L / 100 per slot, so its plans expect exactly this throughput.

/** How long a slot rests after running `runMs` under a CPU limit of `cpuLimit` percent. */
export function restAfterMs(runMs: number, cpuLimit: number): number {
  if (!(cpuLimit > 0) || cpuLimit >= 100 || !(runMs > 0)) return 0;
  return (runMs * (100 - cpuLimit)) / cpuLimit;
}

/** The share of a core a slot uses when it alternates runs of `runMs` with the rests above. */
export function dutyCycle(runMs: number, cpuLimit: number): number {
  const rest = restAfterMs(runMs, cpuLimit);
  return runMs > 0 ? runMs / (runMs + rest) : 0;
}

/** The speed per slot the market is offered under a CPU limit. */
export function offeredSpeed(speed: number, cpuLimit: number): number {
  return (speed * Math.min(100, Math.max(1, cpuLimit))) / 100;
}
