// The task's file system: a tree in memory, private to one run. Input files are read-only
// nodes sharing the lease's bytes; everything the task writes is scratch and counts against its
// memory limit through `reserve`. The tree is the task's whole world, preopened as "/". A path
// is resolved beneath the directory it starts from, as WASI's capabilities have it: a descriptor
// for a directory reaches that directory and what lies below it, nothing above. So a path
// argument must be relative, and ".." that would climb above its starting directory (above "/"
// itself included), directly or through a link, is ENOTCAPABLE, as is following a link whose
// target is absolute (path_symlink refuses to make one). At most MAX_SYMLINKS links are followed
// per lookup.
import { Errno, WasiError } from "./constants.ts";

export interface Times {
  atim: bigint;
  mtim: bigint;
  ctim: bigint;
}

interface NodeBase {
  readonly ino: number;
  times: Times;
}

export interface FileNode extends NodeBase {
  readonly kind: "file";
  /** Backing store; bytes past `size` are spare capacity. */
  data: Uint8Array;
  size: number;
  nlink: number;
  /** Open descriptors on it: an unlinked file keeps its bytes (and their cost) until the last closes. */
  opens: number;
  /** An input file: its contents cannot change (EACCES when opened for writing). */
  readonly readonly: boolean;
}

export interface DirNode extends NodeBase {
  readonly kind: "dir";
  readonly entries: Map<string, Node>;
  /** The directory holding this one; the root is its own parent. */
  parent: DirNode;
}

export interface SymlinkNode extends NodeBase {
  readonly kind: "symlink";
  readonly target: string;
}

export type Node = FileNode | DirNode | SymlinkNode;

export interface Lookup {
  /** The directory that holds (or would hold) `name`. */
  dir: DirNode;
  name: string;
  node: Node | undefined;
  trailingSlash: boolean;
}

export interface MemoryFsOptions {
  /** The time stamped on created and changed nodes (the task's virtual clock). */
  now(): bigint;
  /** Asks for `bytes` more scratch space (negative gives some back); false refuses (ENOSPC). */
  reserve(bytes: number): boolean;
}

/** Linux's limit; a loop of links ends in ELOOP instead of hanging the task. */
export const MAX_SYMLINKS = 40;

const fail = (errno: Errno): never => {
  throw new WasiError(errno);
};

export function isDotName(name: string): boolean {
  return name === "." || name === "..";
}

export class MemoryFs {
  readonly root: DirNode;
  private nextIno = 1;

  constructor(private readonly options: MemoryFsOptions) {
    const root = { kind: "dir", ino: this.nextIno++, times: this.stamp(), entries: new Map() } as Omit<DirNode, "parent">;
    (root as DirNode).parent = root as DirNode;
    this.root = root as DirNode;
  }

  now(): bigint {
    return this.options.now();
  }

  private stamp(): Times {
    const t = this.options.now();
    return { atim: t, mtim: t, ctim: t };
  }

  /** Adds a read-only input file at a relative path, making its directories. */
  addInput(path: string, data: Uint8Array): void {
    const parts = path.split("/").filter((p) => p !== "" && p !== ".");
    let dir = this.root;
    for (const part of parts.slice(0, -1)) {
      const next = dir.entries.get(part);
      if (next?.kind === "dir") dir = next;
      else if (next) fail(Errno.NOTDIR);
      else dir = this.makeDir(dir, part);
    }
    const name = parts[parts.length - 1];
    if (name === undefined || dir.entries.has(name)) fail(Errno.EXIST);
    dir.entries.set(name!, { kind: "file", ino: this.nextIno++, times: this.stamp(), data, size: data.length, nlink: 1, opens: 0, readonly: true });
  }

  makeDir(parent: DirNode, name: string): DirNode {
    const dir: DirNode = { kind: "dir", ino: this.nextIno++, times: this.stamp(), entries: new Map(), parent };
    this.attach(parent, name, dir);
    return dir;
  }

  makeFile(parent: DirNode, name: string): FileNode {
    const file: FileNode = { kind: "file", ino: this.nextIno++, times: this.stamp(), data: new Uint8Array(0), size: 0, nlink: 1, opens: 0, readonly: false };
    this.attach(parent, name, file);
    return file;
  }

  makeSymlink(parent: DirNode, name: string, target: string): SymlinkNode {
    const link: SymlinkNode = { kind: "symlink", ino: this.nextIno++, times: this.stamp(), target };
    this.attach(parent, name, link);
    return link;
  }

  private attach(parent: DirNode, name: string, node: Node): void {
    parent.entries.set(name, node);
    this.touch(parent);
  }

  /** Marks a node modified now (contents or entries changed). */
  touch(node: Node): void {
    const t = this.options.now();
    node.times.mtim = t;
    node.times.ctim = t;
  }

  /** Hard links of a node; a directory has one from its parent, its own ".", and one per subdirectory's "..". */
  nlink(node: Node): number {
    if (node.kind === "file") return node.nlink;
    if (node.kind === "symlink") return 1;
    let n = 2;
    for (const child of node.entries.values()) if (child.kind === "dir") n++;
    return n;
  }

  size(node: Node): number {
    if (node.kind === "file") return node.size;
    if (node.kind === "symlink") return new TextEncoder().encode(node.target).length;
    return 4096; // what the reference host's file system reports for a directory
  }

  /**
   * Finds `path` beneath `start`. A link in the middle of the path is always followed; the last
   * component's link only when `followLast` or the path ends in "/". Climbing above `start` is
   * ENOTCAPABLE: `depth` counts the directories the walk has gone down from it.
   */
  lookup(start: DirNode, path: string, followLast: boolean): Lookup {
    if (path.length === 0) fail(Errno.NOENT);
    if (path.includes("\0")) fail(Errno.ILSEQ);
    if (path.startsWith("/")) fail(Errno.NOTCAPABLE);
    const trailingSlash = path.endsWith("/");
    let dir = start;
    let depth = 0;
    let pending = components(path);
    let links = 0;
    for (;;) {
      const part = pending.shift()!;
      const last = pending.length === 0;
      if (part === "." || part === "..") {
        if (part === "..") {
          if (depth === 0) fail(Errno.NOTCAPABLE);
          dir = dir.parent;
          depth--;
        }
        if (last) return { dir, name: part, node: dir, trailingSlash };
        continue;
      }
      const node = dir.entries.get(part);
      if (node?.kind === "symlink" && (!last || followLast || trailingSlash)) {
        if (++links > MAX_SYMLINKS) fail(Errno.LOOP);
        if (node.target === "") fail(Errno.NOENT);
        if (node.target.startsWith("/")) fail(Errno.NOTCAPABLE);
        // Resolved from the link's own directory, still beneath `start`.
        pending = [...components(node.target), ...pending];
        continue;
      }
      if (last) {
        if (trailingSlash && node && node.kind !== "dir") fail(Errno.NOTDIR);
        return { dir, name: part, node, trailingSlash };
      }
      if (!node) fail(Errno.NOENT);
      if (node!.kind !== "dir") fail(Errno.NOTDIR);
      dir = node as DirNode;
      depth++;
    }
  }

  /** Removes a directory entry; a file's bytes are given back when its last link goes. */
  detach(dir: DirNode, name: string): void {
    const node = dir.entries.get(name);
    if (!node) return;
    dir.entries.delete(name);
    this.touch(dir);
    if (node.kind === "file") {
      node.nlink--;
      node.times.ctim = this.options.now();
      this.releaseIfGone(node);
    }
  }

  opened(file: FileNode): void {
    file.opens++;
  }

  closed(file: FileNode): void {
    file.opens--;
    this.releaseIfGone(file);
  }

  /** A file with no name and no open descriptor can never be reached again: its bytes are given back. */
  private releaseIfGone(file: FileNode): void {
    if (file.nlink > 0 || file.opens > 0 || file.readonly) return;
    this.options.reserve(-file.size);
    file.size = 0;
    file.data = new Uint8Array(0);
  }

  /** rename(2): `from` replaces `to` atomically; the checks are POSIX's. */
  rename(from: Lookup, to: Lookup): void {
    const node = from.node;
    if (!node) return fail(Errno.NOENT);
    if (isDotName(from.name) || isDotName(to.name)) return fail(Errno.INVAL);
    if (to.trailingSlash && node.kind !== "dir") return fail(Errno.NOTDIR);
    const existing = to.node;
    if (existing === node) return;
    if (node.kind === "dir") {
      for (let d = to.dir; ; d = d.parent) {
        if (d === node) return fail(Errno.INVAL); // into its own subtree
        if (d === d.parent) break;
      }
      if (existing && existing.kind !== "dir") return fail(Errno.NOTDIR);
      if (existing && existing.kind === "dir" && existing.entries.size > 0) return fail(Errno.NOTEMPTY);
    } else if (existing?.kind === "dir") {
      return fail(Errno.ISDIR);
    }
    if (existing) this.detach(to.dir, to.name);
    from.dir.entries.delete(from.name);
    this.touch(from.dir);
    to.dir.entries.set(to.name, node);
    this.touch(to.dir);
    if (node.kind === "dir") node.parent = to.dir;
    node.times.ctim = this.options.now();
  }

  read(file: FileNode, offset: number, into: Uint8Array): number {
    if (offset >= file.size) return 0;
    const n = Math.min(into.length, file.size - offset);
    into.set(file.data.subarray(offset, offset + n));
    return n;
  }

  write(file: FileNode, offset: number, bytes: Uint8Array): void {
    const end = offset + bytes.length;
    if (end > file.size) this.resize(file, end);
    file.data.set(bytes, offset);
    this.touch(file);
  }

  /** Grows (with zeros) or shrinks a file, within the scratch budget. */
  resize(file: FileNode, size: number): void {
    if (file.readonly) fail(Errno.ACCES);
    if (!Number.isSafeInteger(size) || size < 0) fail(Errno.FBIG);
    const delta = size - file.size;
    if (delta > 0 && !this.options.reserve(delta)) fail(Errno.NOSPC);
    if (delta < 0) {
      this.options.reserve(delta);
      file.data.fill(0, size, file.size);
    }
    if (size > file.data.length) {
      // Grow by half again so a file written in small pieces is copied a logarithmic number of times.
      const grown = new Uint8Array(Math.max(size, Math.floor(file.data.length * 1.5)));
      grown.set(file.data.subarray(0, file.size));
      file.data = grown;
    }
    file.size = size;
    this.touch(file);
  }
}

function components(path: string): string[] {
  return path.split("/").filter((p) => p !== "");
}
