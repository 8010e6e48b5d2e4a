// What every WASI call of one task works on, and the helpers the call families share.
import { Errno, FILESTAT_BYTES, Filetype, Fstflags, WasiError } from "./constants.ts";
import type { FdTable } from "./descriptors.ts";
import type { GuestMemory } from "./guest-memory.ts";
import type { MemoryFs, Node, Times } from "./memory-fs.ts";
import type { VirtualClock } from "./virtual-clock.ts";

export interface HostContext {
  memory: GuestMemory;
  fds: FdTable;
  fs: MemoryFs;
  clock: VirtualClock;
}

/** Every node of a task lives on one device. */
export const DEVICE_ID = 1n;

export interface Stat {
  ino: number;
  filetype: number;
  nlink: number;
  size: number;
  times: Times;
}

export function nodeStat(fs: MemoryFs, node: Node): Stat {
  const filetype = node.kind === "file" ? Filetype.REGULAR_FILE : node.kind === "dir" ? Filetype.DIRECTORY : Filetype.SYMBOLIC_LINK;
  return { ino: node.ino, filetype, nlink: fs.nlink(node), size: fs.size(node), times: node.times };
}

export function writeFilestat(memory: GuestMemory, ptr: number, s: Stat): void {
  memory.bytes(ptr, FILESTAT_BYTES).fill(0); // bounds check, and zero padding
  const v = memory.view();
  v.setBigUint64(ptr, DEVICE_ID, true);
  v.setBigUint64(ptr + 8, BigInt(s.ino), true);
  v.setUint8(ptr + 16, s.filetype);
  v.setBigUint64(ptr + 24, BigInt(s.nlink), true);
  v.setBigUint64(ptr + 32, BigInt(s.size), true);
  v.setBigUint64(ptr + 40, s.times.atim, true);
  v.setBigUint64(ptr + 48, s.times.mtim, true);
  v.setBigUint64(ptr + 56, s.times.ctim, true);
}

/** fd_filestat_set_times and path_filestat_set_times: a time given, "now", or left alone. */
export function setTimes(times: Times, atim: bigint, mtim: bigint, flags: number, now: bigint): void {
  if (flags & ~(Fstflags.ATIM | Fstflags.ATIM_NOW | Fstflags.MTIM | Fstflags.MTIM_NOW)) throw new WasiError(Errno.INVAL);
  if (flags & Fstflags.ATIM && flags & Fstflags.ATIM_NOW) throw new WasiError(Errno.INVAL);
  if (flags & Fstflags.MTIM && flags & Fstflags.MTIM_NOW) throw new WasiError(Errno.INVAL);
  if (flags & Fstflags.ATIM) times.atim = atim;
  else if (flags & Fstflags.ATIM_NOW) times.atim = now;
  if (flags & Fstflags.MTIM) times.mtim = mtim;
  else if (flags & Fstflags.MTIM_NOW) times.mtim = now;
  times.ctim = now;
}

/** Turns a call's thrown WasiError (or an access past the end of memory) into its errno. */
export function errnoOf(e: unknown): number {
  if (e instanceof WasiError) return e.errno;
  if (e instanceof RangeError) return Errno.FAULT;
  throw e;
}
