// The WASI preview 1 functions a task may import, and the host that serves them.
// File descriptors and the in-memory file system come from @bjorn3/browser_wasi_shim;
// the clock, the random source, sleeping and signals are replaced so a task's output
// depends only on its arguments, stdin, files and seed (DESIGN.md, "Jobs, tasks and the sandbox").
import { WASI, WASIProcExit, type Fd } from "@bjorn3/browser_wasi_shim";
import type { SeededRandom } from "./seeded-random.ts";

export const WASI_MODULE = "wasi_snapshot_preview1";

/**
 * Every function of `wasi_snapshot_preview1` the sandbox implements. A module importing
 * anything else (sockets, another module such as `env`) is refused at upload.
 */
export const ALLOWED_WASI_IMPORTS = [
  "args_get",
  "args_sizes_get",
  "environ_get",
  "environ_sizes_get",
  "clock_res_get",
  "clock_time_get",
  "fd_advise",
  "fd_allocate",
  "fd_close",
  "fd_datasync",
  "fd_fdstat_get",
  "fd_fdstat_set_flags",
  "fd_fdstat_set_rights",
  "fd_filestat_get",
  "fd_filestat_set_size",
  "fd_filestat_set_times",
  "fd_pread",
  "fd_prestat_get",
  "fd_prestat_dir_name",
  "fd_pwrite",
  "fd_read",
  "fd_readdir",
  "fd_renumber",
  "fd_seek",
  "fd_sync",
  "fd_tell",
  "fd_write",
  "path_create_directory",
  "path_filestat_get",
  "path_filestat_set_times",
  "path_link",
  "path_open",
  "path_readlink",
  "path_remove_directory",
  "path_rename",
  "path_symlink",
  "path_unlink_file",
  "poll_oneoff",
  "proc_exit",
  "proc_raise",
  "sched_yield",
  "random_get",
] as const;
export type AllowedWasiImport = (typeof ALLOWED_WASI_IMPORTS)[number];

const ALLOWED = new Set<string>(ALLOWED_WASI_IMPORTS);
export function isAllowedImport(module: string, name: string): boolean {
  return module === WASI_MODULE && ALLOWED.has(name);
}

/** The wall-clock time every task starts at: 2025-01-01T00:00:00Z, in nanoseconds. */
export const VIRTUAL_EPOCH_NS = 1_735_689_600_000_000_000n;
/** Each clock read moves the virtual clock on by one microsecond, so loops waiting on time end. */
export const VIRTUAL_TICK_NS = 1_000n;

const ERRNO_SUCCESS = 0;
const ERRNO_INVAL = 28;
const CLOCK_REALTIME = 0;
const CLOCK_MONOTONIC = 1;
const CLOCK_PROCESS_CPUTIME = 2;
const CLOCK_THREAD_CPUTIME = 3;
const EVENTTYPE_CLOCK = 0;
const SUBCLOCKFLAGS_ABSTIME = 1;
const SUBSCRIPTION_BYTES = 48;
const EVENT_BYTES = 32;

/** Raised by proc_raise; the task ends as a trap. */
export class TaskSignal extends Error {}

export interface WasiHost {
  wasi: WASI;
  imports: Record<string, (...args: never[]) => unknown>;
}

export function createWasiHost(args: string[], fds: Fd[], random: SeededRandom): WasiHost {
  // debug must be false explicitly: the shim turns logging on when the option is absent.
  const wasi = new WASI(args, [], fds, { debug: false });
  let elapsedNs = 0n; // the virtual clock, shared by all clock ids

  const view = () => new DataView(wasi.inst.exports.memory.buffer);
  const now = (clockId: number): bigint | null => {
    elapsedNs += VIRTUAL_TICK_NS;
    if (clockId === CLOCK_REALTIME) return VIRTUAL_EPOCH_NS + elapsedNs;
    if (clockId === CLOCK_MONOTONIC || clockId === CLOCK_PROCESS_CPUTIME || clockId === CLOCK_THREAD_CPUTIME) return elapsedNs;
    return null;
  };

  const overrides = {
    clock_res_get(clockId: number, resultPtr: number): number {
      if (clockId < 0 || clockId > 3) return ERRNO_INVAL;
      view().setBigUint64(resultPtr, VIRTUAL_TICK_NS, true);
      return ERRNO_SUCCESS;
    },
    clock_time_get(clockId: number, _precision: bigint, resultPtr: number): number {
      const t = now(clockId);
      if (t === null) return ERRNO_INVAL;
      view().setBigUint64(resultPtr, t, true);
      return ERRNO_SUCCESS;
    },
    random_get(bufPtr: number, bufLen: number): number {
      random.fill(new Uint8Array(wasi.inst.exports.memory.buffer, bufPtr, bufLen));
      return ERRNO_SUCCESS;
    },
    // Sleeping advances the virtual clock instead of waiting; descriptor readiness is
    // reported at once, since every descriptor is in memory.
    poll_oneoff(inPtr: number, outPtr: number, count: number, neventsPtr: number): number {
      if (count === 0) return ERRNO_INVAL;
      const v = view();
      const ready: { userdata: bigint; type: number }[] = [];
      let soonest: { userdata: bigint; deadline: bigint } | null = null;
      for (let i = 0; i < count; i++) {
        const p = inPtr + i * SUBSCRIPTION_BYTES;
        const userdata = v.getBigUint64(p, true);
        const type = v.getUint8(p + 8);
        if (type === EVENTTYPE_CLOCK) {
          const clockId = v.getUint32(p + 16, true);
          const timeout = v.getBigUint64(p + 24, true);
          const flags = v.getUint16(p + 40, true);
          const base = clockId === CLOCK_REALTIME ? VIRTUAL_EPOCH_NS + elapsedNs : elapsedNs;
          const wait = flags & SUBCLOCKFLAGS_ABSTIME ? timeout - base : timeout;
          const deadline = elapsedNs + (wait > 0n ? wait : 0n);
          if (!soonest || deadline < soonest.deadline) soonest = { userdata, deadline };
        } else {
          ready.push({ userdata, type });
        }
      }
      if (ready.length === 0 && soonest) {
        elapsedNs = soonest.deadline;
        ready.push({ userdata: soonest.userdata, type: EVENTTYPE_CLOCK });
      }
      ready.forEach((e, i) => {
        const p = outPtr + i * EVENT_BYTES;
        for (let b = 0; b < EVENT_BYTES; b++) v.setUint8(p + b, 0);
        v.setBigUint64(p, e.userdata, true);
        v.setUint8(p + 10, e.type);
      });
      v.setUint32(neventsPtr, ready.length, true);
      return ERRNO_SUCCESS;
    },
    proc_raise(signal: number): number {
      throw new TaskSignal(`the task raised signal ${signal}`);
    },
    sched_yield(): number {
      return ERRNO_SUCCESS;
    },
  };

  const all: Record<string, (...args: never[]) => unknown> = { ...wasi.wasiImport, ...overrides };
  const imports: Record<string, (...args: never[]) => unknown> = {};
  for (const name of ALLOWED_WASI_IMPORTS) {
    const fn = all[name];
    if (!fn) throw new Error(`the WASI shim lacks ${name}`);
    imports[name] = fn;
  }
  return { wasi, imports };
}

export { WASIProcExit };
