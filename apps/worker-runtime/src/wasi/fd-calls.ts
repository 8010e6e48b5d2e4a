// WASI preview 1 calls on open descriptors (fd_*). Each checks the descriptor's rights, then
// acts on the in-memory file system or the pipe behind it.
import { DIRENT_BYTES, Errno, Fdflags, Filetype, PREOPENTYPE_DIR, Rights, WasiError, Whence } from "./constants.ts";
import type { Descriptor, FileDescriptor } from "./descriptors.ts";
import { type HostContext, type Stat, nodeStat, setTimes, writeFilestat } from "./host-context.ts";

const R = Rights;
const MAX_FILE_BYTES = Number.MAX_SAFE_INTEGER;
const FDFLAGS_ALL = Fdflags.APPEND | Fdflags.DSYNC | Fdflags.NONBLOCK | Fdflags.RSYNC | Fdflags.SYNC;
const encoder = new TextEncoder();

function filetypeOf(d: Descriptor): number {
  return d.kind === "file" ? Filetype.REGULAR_FILE : d.kind === "dir" ? Filetype.DIRECTORY : Filetype.SOCKET_STREAM;
}

function notDirectory(d: Descriptor): asserts d is Exclude<Descriptor, { kind: "dir" }> {
  if (d.kind === "dir") throw new WasiError(Errno.ISDIR);
}

function file(d: Descriptor): FileDescriptor {
  notDirectory(d);
  if (d.kind !== "file") throw new WasiError(Errno.SPIPE);
  return d;
}

/** A 64-bit offset from the guest as a safe integer; beyond that no in-memory file can reach. */
function offsetOf(value: bigint): number {
  if (value < 0n) throw new WasiError(Errno.INVAL);
  if (value > BigInt(MAX_FILE_BYTES)) throw new WasiError(Errno.FBIG);
  return Number(value);
}

export function fdCalls(ctx: HostContext) {
  const { memory, fds, fs } = ctx;

  const readInto = (d: Descriptor, buffers: Uint8Array[], at: number | null): number => {
    notDirectory(d);
    let total = 0;
    if (d.kind === "pipe") {
      const input = d.input;
      if (!input) throw new WasiError(Errno.BADF);
      for (const b of buffers) {
        const n = Math.min(b.length, input.data.length - input.position);
        b.set(input.data.subarray(input.position, input.position + n));
        input.position += n;
        total += n;
        if (n < b.length) break;
      }
      return total;
    }
    let offset = at ?? d.offset;
    for (const b of buffers) {
      const n = fs.read(d.node, offset, b);
      offset += n;
      total += n;
      if (n < b.length) break;
    }
    if (at === null) d.offset = offset;
    return total;
  };

  const writeFrom = (d: Descriptor, buffers: Uint8Array[], at: number | null): number => {
    notDirectory(d);
    let total = 0;
    if (d.kind === "pipe") {
      if (!d.output) throw new WasiError(Errno.BADF);
      for (const b of buffers) {
        d.output(b);
        total += b.length;
      }
      return total;
    }
    // O_APPEND: every write lands at the end, whatever the offset (POSIX write(2)).
    let offset = at ?? (d.flags & Fdflags.APPEND ? d.node.size : d.offset);
    for (const b of buffers) {
      if (offset + b.length > MAX_FILE_BYTES) throw new WasiError(Errno.FBIG);
      fs.write(d.node, offset, b);
      offset += b.length;
      total += b.length;
    }
    if (at === null) d.offset = offset;
    return total;
  };

  const statOf = (d: Descriptor): Stat => {
    if (d.kind === "pipe") {
      const t = ctx.clock.realtime();
      return { ino: d.ino, filetype: Filetype.SOCKET_STREAM, nlink: 1, size: 0, times: { atim: t, mtim: t, ctim: t } };
    }
    return nodeStat(fs, d.node);
  };

  return {
    fd_advise(fd: number, _offset: bigint, _len: bigint, advice: number): void {
      file(fds.get(fd, R.FD_ADVISE));
      if (advice < 0 || advice > 5) throw new WasiError(Errno.INVAL);
    },
    fd_allocate(fd: number, offset: bigint, len: bigint): void {
      const d = file(fds.get(fd, R.FD_ALLOCATE));
      if (len === 0n) throw new WasiError(Errno.INVAL);
      const end = offsetOf(offset + len);
      if (end > d.node.size) fs.resize(d.node, end);
    },
    fd_close(fd: number): void {
      fds.close(fd);
    },
    fd_datasync(fd: number): void {
      fds.get(fd, R.FD_DATASYNC);
    },
    fd_sync(fd: number): void {
      fds.get(fd, R.FD_SYNC);
    },
    fd_fdstat_get(fd: number, ptr: number): void {
      const d = fds.get(fd);
      memory.bytes(ptr, 24).fill(0);
      const v = memory.view();
      v.setUint8(ptr, filetypeOf(d));
      v.setUint16(ptr + 2, d.flags, true);
      v.setBigUint64(ptr + 8, d.rightsBase, true);
      v.setBigUint64(ptr + 16, d.rightsInheriting, true);
    },
    fd_fdstat_set_flags(fd: number, flags: number): void {
      const d = fds.get(fd, R.FD_FDSTAT_SET_FLAGS);
      if (flags & ~FDFLAGS_ALL) throw new WasiError(Errno.INVAL);
      d.flags = flags; // everything is in memory, so the sync flags hold trivially
    },
    fd_fdstat_set_rights(fd: number, base: bigint, inheriting: bigint): void {
      const d = fds.get(fd);
      // Rights can only be dropped, never gained back.
      if ((base & ~d.rightsBase) !== 0n || (inheriting & ~d.rightsInheriting) !== 0n) throw new WasiError(Errno.NOTCAPABLE);
      d.rightsBase = base;
      d.rightsInheriting = inheriting;
    },
    fd_filestat_get(fd: number, ptr: number): void {
      writeFilestat(memory, ptr, statOf(fds.get(fd, R.FD_FILESTAT_GET)));
    },
    fd_filestat_set_size(fd: number, size: bigint): void {
      const d = file(fds.get(fd, R.FD_FILESTAT_SET_SIZE));
      fs.resize(d.node, offsetOf(size));
    },
    fd_filestat_set_times(fd: number, atim: bigint, mtim: bigint, flags: number): void {
      const d = fds.get(fd, R.FD_FILESTAT_SET_TIMES);
      if (d.kind === "pipe") throw new WasiError(Errno.BADF);
      setTimes(d.node.times, atim, mtim, flags, ctx.clock.realtime());
    },
    fd_pread(fd: number, iovs: number, count: number, offset: bigint, nreadPtr: number): void {
      const d = fds.get(fd, R.FD_READ | R.FD_SEEK);
      memory.u32(nreadPtr, readInto(file(d), memory.iovecs(iovs, count), offsetOf(offset)));
    },
    fd_pwrite(fd: number, iovs: number, count: number, offset: bigint, nwrittenPtr: number): void {
      const d = fds.get(fd, R.FD_WRITE | R.FD_SEEK);
      // The specification's pwrite ignores O_APPEND: it writes at the offset given.
      memory.u32(nwrittenPtr, writeFrom(file(d), memory.iovecs(iovs, count), offsetOf(offset)));
    },
    fd_read(fd: number, iovs: number, count: number, nreadPtr: number): void {
      memory.u32(nreadPtr, readInto(fds.get(fd, R.FD_READ), memory.iovecs(iovs, count), null));
    },
    fd_write(fd: number, iovs: number, count: number, nwrittenPtr: number): void {
      memory.u32(nwrittenPtr, writeFrom(fds.get(fd, R.FD_WRITE), memory.iovecs(iovs, count), null));
    },
    fd_prestat_get(fd: number, ptr: number): void {
      const d = fds.get(fd);
      // An open descriptor that was not preopened is EINVAL, as in the reference host; only a
      // closed one is EBADF, which is where the C library's scan of preopens stops.
      if (d.kind !== "dir" || d.preopen === undefined) throw new WasiError(Errno.INVAL);
      memory.u32(ptr, PREOPENTYPE_DIR);
      memory.u32(ptr + 4, encoder.encode(d.preopen).length);
    },
    fd_prestat_dir_name(fd: number, ptr: number, len: number): void {
      const d = fds.get(fd);
      if (d.kind !== "dir" || d.preopen === undefined) throw new WasiError(Errno.INVAL);
      const name = encoder.encode(d.preopen);
      if (len < name.length) throw new WasiError(Errno.NAMETOOLONG);
      memory.bytes(ptr, name.length).set(name);
    },
    fd_readdir(fd: number, buf: number, len: number, cookie: bigint, usedPtr: number): void {
      const d = fds.get(fd, R.FD_READDIR);
      if (d.kind !== "dir") throw new WasiError(Errno.NOTDIR);
      const dir = d.node;
      const entries: [string, { ino: number; kind: string }][] = [[".", dir], ["..", dir.parent], ...dir.entries];
      const out = memory.bytes(buf, len);
      const header = new DataView(new ArrayBuffer(DIRENT_BYTES));
      let used = 0;
      // The cookie is the index of the next entry: a caller whose buffer filled up asks again from there.
      for (let i = Number(cookie); i < entries.length && used < len; i++) {
        const [name, node] = entries[i]!;
        const nameBytes = encoder.encode(name);
        header.setBigUint64(0, BigInt(i + 1), true);
        header.setBigUint64(8, BigInt(node.ino), true);
        header.setUint32(16, nameBytes.length, true);
        header.setUint8(20, node.kind === "file" ? Filetype.REGULAR_FILE : node.kind === "dir" ? Filetype.DIRECTORY : Filetype.SYMBOLIC_LINK);
        const entry = new Uint8Array(DIRENT_BYTES + nameBytes.length);
        entry.set(new Uint8Array(header.buffer));
        entry.set(nameBytes, DIRENT_BYTES);
        // An entry that does not fit is cut; a full buffer tells the caller to ask again with more room.
        const n = Math.min(entry.length, len - used);
        out.set(entry.subarray(0, n), used);
        used += n;
      }
      memory.u32(usedPtr, used);
    },
    fd_renumber(from: number, to: number): void {
      fds.renumber(from, to);
    },
    fd_seek(fd: number, offset: bigint, whence: number, newOffsetPtr: number): void {
      const d = fds.get(fd, offset === 0n && whence === Whence.CUR ? R.FD_TELL : R.FD_SEEK);
      const f = file(d);
      const base = whence === Whence.SET ? 0n : whence === Whence.CUR ? BigInt(f.offset) : whence === Whence.END ? BigInt(f.node.size) : -1n;
      if (base < 0n) throw new WasiError(Errno.INVAL);
      f.offset = offsetOf(base + offset);
      memory.u64(newOffsetPtr, BigInt(f.offset));
    },
    fd_tell(fd: number, ptr: number): void {
      memory.u64(ptr, BigInt(file(fds.get(fd, R.FD_TELL)).offset));
    },
  };
}
