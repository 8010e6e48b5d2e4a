// "Only while I am not using this computer" on a server: the machine counts as idle while the
// rest of it (every process but this worker) keeps its cores below the producer's threshold. The
// share is measured over the last few seconds from the kernel's per-core counters (os.cpus)
// less this process's own CPU time (process.cpuUsage, which includes its worker threads), so the
// worker's own tasks never count as the owner using the machine.
import { cpus } from "node:os";
import type { MachineControls } from "../controls/machine-controls.ts";
import type { OwnerActivity } from "../controls/local-conditions.ts";

interface Sample {
  at: number;
  busyMs: number;
  ownMs: number;
}

function sample(): Sample {
  let busy = 0;
  for (const c of cpus()) busy += c.times.user + c.times.nice + c.times.sys + c.times.irq;
  const own = process.cpuUsage();
  return { at: performance.now(), busyMs: busy, ownMs: (own.user + own.system) / 1000 };
}

/** Share of all cores (0 to 1) used by everything but this process between two samples. */
export function otherLoad(from: Sample, to: Sample, cores: number): number {
  const wall = to.at - from.at;
  if (wall <= 0 || cores <= 0) return 0;
  return Math.min(1, Math.max(0, (to.busyMs - from.busyMs - (to.ownMs - from.ownMs)) / (wall * cores)));
}

/** Samples every `everyMs`; the owner is idle while the others' load stays under `idleLoad`. */
export function createCpuLoadActivity(everyMs = 2_000): OwnerActivity & { load(): number | null } {
  const cores = Math.max(1, cpus().length);
  let last = sample();
  let load: number | null = null;
  const timer = setInterval(() => {
    const next = sample();
    load = otherLoad(last, next, cores);
    last = next;
  }, everyMs);
  timer.unref?.();
  return {
    load: () => load,
    ownerIdle: (controls: MachineControls) => (load === null ? null : load < controls.idleLoad),
    close: () => clearInterval(timer),
  };
}
