// WASI preview 1 calls on paths (path_*), each relative to a directory descriptor whose
// rights allow it. Lookups and the POSIX rules of rename, link and unlink are in memory-fs.ts.
import {
  DIRECTORY_RIGHTS,
  Errno,
  LOOKUP_SYMLINK_FOLLOW,
  Oflags,
  READ_RIGHTS,
  REGULAR_FILE_RIGHTS,
  Rights,
  WRITE_RIGHTS,
  WasiError,
} from "./constants.ts";
import type { Descriptor } from "./descriptors.ts";
import { type HostContext, nodeStat, setTimes, writeFilestat } from "./host-context.ts";
import { isDotName, type Lookup } from "./memory-fs.ts";

const R = Rights;
const encoder = new TextEncoder();

export function pathCalls(ctx: HostContext) {
  const { memory, fds, fs } = ctx;

  const at = (fd: number, rights: bigint, ptr: number, len: number, follow: boolean): Lookup => {
    const dir = fds.dir(fd, rights);
    return fs.lookup(dir.node, memory.string(ptr, len), follow);
  };
  const existing = (l: Lookup) => {
    if (!l.node) throw new WasiError(Errno.NOENT);
    return l.node;
  };

  return {
    path_create_directory(fd: number, ptr: number, len: number): void {
      const l = at(fd, R.PATH_CREATE_DIRECTORY, ptr, len, false);
      if (l.node || isDotName(l.name)) throw new WasiError(Errno.EXIST);
      fs.makeDir(l.dir, l.name);
    },
    path_filestat_get(fd: number, flags: number, ptr: number, len: number, statPtr: number): void {
      const l = at(fd, R.PATH_FILESTAT_GET, ptr, len, (flags & LOOKUP_SYMLINK_FOLLOW) !== 0);
      writeFilestat(memory, statPtr, nodeStat(fs, existing(l)));
    },
    path_filestat_set_times(fd: number, flags: number, ptr: number, len: number, atim: bigint, mtim: bigint, fst: number): void {
      const l = at(fd, R.PATH_FILESTAT_SET_TIMES, ptr, len, (flags & LOOKUP_SYMLINK_FOLLOW) !== 0);
      setTimes(existing(l).times, atim, mtim, fst, ctx.clock.realtime());
    },
    path_link(oldFd: number, oldFlags: number, oldPtr: number, oldLen: number, newFd: number, newPtr: number, newLen: number): void {
      const from = at(oldFd, R.PATH_LINK_SOURCE, oldPtr, oldLen, (oldFlags & LOOKUP_SYMLINK_FOLLOW) !== 0);
      const to = at(newFd, R.PATH_LINK_TARGET, newPtr, newLen, false);
      const node = existing(from);
      if (node.kind === "dir") throw new WasiError(Errno.PERM); // no hard links to directories
      if (to.node || isDotName(to.name)) throw new WasiError(Errno.EXIST);
      if (to.trailingSlash) throw new WasiError(Errno.NOENT);
      to.dir.entries.set(to.name, node);
      fs.touch(to.dir);
      if (node.kind === "file") node.nlink++;
      node.times.ctim = fs.now();
    },
    path_open(
      fd: number,
      dirFlags: number,
      ptr: number,
      len: number,
      oflags: number,
      rightsBase: bigint,
      rightsInheriting: bigint,
      fdflags: number,
      fdPtr: number,
    ): void {
      const parent = fds.dir(fd, R.PATH_OPEN);
      if ((rightsBase | rightsInheriting) & ~parent.rightsInheriting) throw new WasiError(Errno.NOTCAPABLE);
      if (oflags & Oflags.CREAT && !(parent.rightsBase & R.PATH_CREATE_FILE)) throw new WasiError(Errno.NOTCAPABLE);
      if (oflags & Oflags.TRUNC && !(parent.rightsBase & R.PATH_FILESTAT_SET_SIZE)) throw new WasiError(Errno.NOTCAPABLE);
      const l = fs.lookup(parent.node, memory.string(ptr, len), (dirFlags & LOOKUP_SYMLINK_FOLLOW) !== 0);
      const writing = (rightsBase & WRITE_RIGHTS) !== 0n || (oflags & Oflags.TRUNC) !== 0;

      let node = l.node;
      if (!node) {
        if (!(oflags & Oflags.CREAT)) throw new WasiError(Errno.NOENT);
        if (l.trailingSlash || oflags & Oflags.DIRECTORY) throw new WasiError(Errno.ISDIR);
        node = fs.makeFile(l.dir, l.name);
      } else if (oflags & Oflags.CREAT && oflags & Oflags.EXCL) {
        throw new WasiError(Errno.EXIST);
      }

      let d: Descriptor;
      if (node.kind === "symlink") throw new WasiError(Errno.LOOP); // opened without following links
      if (node.kind === "dir") {
        if (writing) throw new WasiError(Errno.ISDIR);
        d = { kind: "dir", node, rightsBase: rightsBase & DIRECTORY_RIGHTS, rightsInheriting, flags: fdflags };
      } else {
        if (oflags & Oflags.DIRECTORY) throw new WasiError(Errno.NOTDIR);
        if (writing && node.readonly) throw new WasiError(Errno.ACCES);
        if (oflags & Oflags.TRUNC) fs.resize(node, 0);
        // A descriptor opened only to write cannot read, and the other way round.
        const reading = (rightsBase & READ_RIGHTS) !== 0n;
        let rights = rightsBase & REGULAR_FILE_RIGHTS;
        if (!writing) rights &= ~WRITE_RIGHTS;
        if (!reading && writing) rights &= ~READ_RIGHTS;
        d = { kind: "file", node, offset: 0, rightsBase: rights, rightsInheriting: 0n, flags: fdflags };
      }
      const opened = fds.add(d);
      if (d.kind === "file") fs.opened(d.node);
      memory.u32(fdPtr, opened);
    },
    path_readlink(fd: number, ptr: number, len: number, buf: number, bufLen: number, usedPtr: number): void {
      const node = existing(at(fd, R.PATH_READLINK, ptr, len, false));
      if (node.kind !== "symlink") throw new WasiError(Errno.INVAL);
      // Like readlink(2), a target longer than the buffer is cut without error.
      const target = encoder.encode(node.target).subarray(0, bufLen);
      memory.bytes(buf, target.length).set(target);
      memory.u32(usedPtr, target.length);
    },
    path_remove_directory(fd: number, ptr: number, len: number): void {
      const l = at(fd, R.PATH_REMOVE_DIRECTORY, ptr, len, false);
      const node = existing(l);
      if (node.kind !== "dir") throw new WasiError(Errno.NOTDIR);
      if (l.name === ".") throw new WasiError(Errno.INVAL);
      if (l.name === ".." || node.entries.size > 0) throw new WasiError(Errno.NOTEMPTY);
      fs.detach(l.dir, l.name);
    },
    path_rename(fd: number, oldPtr: number, oldLen: number, newFd: number, newPtr: number, newLen: number): void {
      const from = at(fd, R.PATH_RENAME_SOURCE, oldPtr, oldLen, false);
      const to = at(newFd, R.PATH_RENAME_TARGET, newPtr, newLen, false);
      fs.rename(from, to);
    },
    path_symlink(oldPtr: number, oldLen: number, fd: number, newPtr: number, newLen: number): void {
      const target = memory.string(oldPtr, oldLen);
      const l = at(fd, R.PATH_SYMLINK, newPtr, newLen, false);
      // An absolute target would name a place outside every descriptor's reach (memory-fs.ts);
      // EPERM, as the reference host answers.
      if (target.startsWith("/")) throw new WasiError(Errno.PERM);
      if (l.node || isDotName(l.name)) throw new WasiError(Errno.EXIST);
      if (l.trailingSlash) throw new WasiError(Errno.NOENT);
      fs.makeSymlink(l.dir, l.name, target);
    },
    path_unlink_file(fd: number, ptr: number, len: number): void {
      const l = at(fd, R.PATH_UNLINK_FILE, ptr, len, false);
      const node = existing(l);
      if (node.kind === "dir") throw new WasiError(Errno.ISDIR);
      fs.detach(l.dir, l.name);
    },
  };
}
