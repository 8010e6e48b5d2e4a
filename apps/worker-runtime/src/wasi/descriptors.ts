// The task's open file descriptors: regular files and directories of the in-memory file
// system, and pipes for stdin, stdout and stderr. A descriptor carries its WASI rights; every
// call checks them first, as the specification's capability model asks (ENOTCAPABLE).
import { Errno, WasiError } from "./constants.ts";
import type { DirNode, FileNode } from "./memory-fs.ts";

interface DescriptorBase {
  rightsBase: bigint;
  rightsInheriting: bigint;
  /** fdflags: APPEND, DSYNC, NONBLOCK, RSYNC, SYNC. */
  flags: number;
}

export interface FileDescriptor extends DescriptorBase {
  kind: "file";
  node: FileNode;
  offset: number;
}

export interface DirDescriptor extends DescriptorBase {
  kind: "dir";
  node: DirNode;
  /** The name a preopened directory is announced under (fd_prestat_dir_name). */
  preopen?: string;
}

/** One end of a pipe: stdin reads `input`, stdout and stderr hand bytes to `output`. */
export interface PipeDescriptor extends DescriptorBase {
  kind: "pipe";
  ino: number;
  input?: { data: Uint8Array; position: number };
  output?: (bytes: Uint8Array) => void;
}

export type Descriptor = FileDescriptor | DirDescriptor | PipeDescriptor;

/** As many descriptors as a default Linux process may hold. */
export const MAX_DESCRIPTORS = 1024;

export class FdTable {
  private readonly table: (Descriptor | undefined)[] = [];

  /** `onClose` hears of every descriptor that goes, closed or replaced by fd_renumber. */
  constructor(private readonly onClose: (d: Descriptor) => void = () => {}) {}

  /** The descriptor `fd`, if it holds every one of `rights`. */
  get(fd: number, rights: bigint = 0n): Descriptor {
    const d = this.table[fd];
    if (!d) throw new WasiError(Errno.BADF);
    if ((d.rightsBase & rights) !== rights) throw new WasiError(Errno.NOTCAPABLE);
    return d;
  }

  dir(fd: number, rights: bigint): DirDescriptor {
    const d = this.get(fd);
    if (d.kind !== "dir") throw new WasiError(Errno.NOTDIR);
    if ((d.rightsBase & rights) !== rights) throw new WasiError(Errno.NOTCAPABLE);
    return d;
  }

  /** Puts `d` at the lowest free number, as POSIX open does. */
  add(d: Descriptor): number {
    let fd = this.table.indexOf(undefined);
    if (fd < 0) fd = this.table.length;
    if (fd >= MAX_DESCRIPTORS) throw new WasiError(Errno.MFILE);
    this.table[fd] = d;
    return fd;
  }

  close(fd: number): void {
    this.onClose(this.get(fd));
    this.forget(fd);
  }

  private forget(fd: number): void {
    this.table[fd] = undefined;
    while (this.table.length > 0 && this.table[this.table.length - 1] === undefined) this.table.pop();
  }

  /** fd_renumber: `to` must be open too; it is closed and `from` takes its number. */
  renumber(from: number, to: number): void {
    const d = this.get(from);
    const replaced = this.get(to);
    if (from === to) return;
    this.onClose(replaced);
    this.table[to] = d;
    this.forget(from);
  }
}
