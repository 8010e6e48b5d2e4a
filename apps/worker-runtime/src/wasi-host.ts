// The WASI preview 1 functions a task may import, and the host that serves them: an
// in-memory file system (wasi/memory-fs.ts), pipes for stdin, stdout and stderr, and clocks and
// random bytes from the task's seed (docs/DESIGN.md, "Jobs, tasks and the sandbox"). The call
// families live in wasi/*-calls.ts; this file wires one task's descriptors and imports.
import type { SeededRandom } from "./seeded-random.ts";
import { DIRECTORY_INHERITING_RIGHTS, DIRECTORY_RIGHTS, PIPE_RIGHTS, Rights } from "./wasi/constants.ts";
import { FdTable } from "./wasi/descriptors.ts";
import { fdCalls } from "./wasi/fd-calls.ts";
import { GuestMemory } from "./wasi/guest-memory.ts";
import { type HostContext, errnoOf } from "./wasi/host-context.ts";
import { MemoryFs } from "./wasi/memory-fs.ts";
import { pathCalls } from "./wasi/path-calls.ts";
import { ProcExit, TaskSignal, processCalls } from "./wasi/process-calls.ts";
import { sockCalls } from "./wasi/sock-calls.ts";
import { VirtualClock } from "./wasi/virtual-clock.ts";

export const WASI_MODULE = "wasi_snapshot_preview1";

/**
 * Every function of `wasi_snapshot_preview1` the sandbox implements, each as the specification
 * says (checked against the reference host by src/wasi-conformance.test.ts); the socket calls
 * answer as a host without network does (wasi/sock-calls.ts). A module importing anything else
 * (another module such as `env`, a call outside preview 1) is refused at upload.
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
  "sock_accept",
  "sock_recv",
  "sock_send",
  "sock_shutdown",
] as const;
export type AllowedWasiImport = (typeof ALLOWED_WASI_IMPORTS)[number];

const ALLOWED = new Set<string>(ALLOWED_WASI_IMPORTS);
export function isAllowedImport(module: string, name: string): boolean {
  return module === WASI_MODULE && ALLOWED.has(name);
}

/** The directory the task's files are preopened as (fd 3). */
export const ROOT_PREOPEN = "/";

export interface WasiHostOptions {
  /** argv, program name first. */
  args: string[];
  env: Record<string, string>;
  random: SeededRandom;
  stdin: Uint8Array;
  stdout(bytes: Uint8Array): void;
  stderr(bytes: Uint8Array): void;
  /** Read-only input files by relative path. */
  files: Record<string, Uint8Array>;
  /** Asks for more scratch bytes (negative: gives some back); false refuses the write (ENOSPC). */
  reserve(bytes: number): boolean;
}

export interface WasiHost {
  imports: Record<string, (...args: never[]) => unknown>;
  fs: MemoryFs;
  /** Runs the module's `_start` and returns its exit code. */
  start(instance: WebAssembly.Instance): number;
}

export function createWasiHost(options: WasiHostOptions): WasiHost {
  const clock = new VirtualClock();
  const memory = new GuestMemory();
  const fs = new MemoryFs({ now: () => clock.realtime(), reserve: options.reserve });
  for (const [path, data] of Object.entries(options.files)) fs.addInput(path, data);

  const fds = new FdTable((d) => {
    if (d.kind === "file") fs.closed(d.node);
  });
  const pipe = { flags: 0, rightsBase: PIPE_RIGHTS, rightsInheriting: DIRECTORY_INHERITING_RIGHTS };
  // stdin, stdout and stderr are pipes, as when a shell pipes a program: programs that refuse to
  // write binary data to a terminal (compressors) see that they may. Inode numbers 1 000 001.. keep
  // clear of the file system's.
  fds.add({ ...pipe, kind: "pipe", ino: 1_000_001, input: { data: options.stdin, position: 0 }, });
  fds.add({ ...pipe, kind: "pipe", ino: 1_000_002, output: options.stdout, });
  fds.add({ ...pipe, kind: "pipe", ino: 1_000_003, output: options.stderr, });
  fds.add({ kind: "dir", node: fs.root, preopen: ROOT_PREOPEN, flags: 0, rightsBase: DIRECTORY_RIGHTS, rightsInheriting: DIRECTORY_INHERITING_RIGHTS });

  const ctx: HostContext = { memory, fds, fs, clock };
  const calls: Record<string, (...args: never[]) => void> = {
    ...fdCalls(ctx),
    ...pathCalls(ctx),
    ...processCalls(ctx, { args: options.args, env: options.env, random: options.random }),
    ...sockCalls(ctx),
  };
  const imports: Record<string, (...args: never[]) => unknown> = {};
  for (const name of ALLOWED_WASI_IMPORTS) {
    const call = calls[name];
    if (!call) throw new Error(`the WASI host lacks ${name}`);
    imports[name] = (...args: never[]) => {
      try {
        call(...args);
        return 0;
      } catch (e) {
        return errnoOf(e);
      }
    };
  }

  return {
    imports,
    fs,
    start(instance) {
      const exports = instance.exports as { memory: WebAssembly.Memory; _start: () => void };
      memory.attach(exports.memory);
      try {
        exports._start();
        return 0;
      } catch (e) {
        if (e instanceof ProcExit) return e.code;
        throw e;
      }
    },
  };
}

export { ProcExit, TaskSignal };
export { VIRTUAL_EPOCH_NS, VIRTUAL_TICK_NS } from "./wasi/virtual-clock.ts";
