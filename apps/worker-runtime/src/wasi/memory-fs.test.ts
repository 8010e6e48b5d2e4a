import { describe, expect, it } from "vitest";
import { Errno, WasiError } from "./constants.ts";
import { MemoryFs, type DirNode, type FileNode } from "./memory-fs.ts";

function fsWithBudget(budget = Infinity) {
  let used = 0;
  const fs = new MemoryFs({
    now: () => 1n,
    reserve: (bytes) => {
      if (bytes > 0 && used + bytes > budget) return false;
      used += bytes;
      return true;
    },
  });
  return { fs, used: () => used };
}

const errno = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof WasiError) return e.errno;
    throw e;
  }
  return Errno.SUCCESS;
};

describe("MemoryFs lookups", () => {
  const { fs } = fsWithBudget();
  const a = fs.makeDir(fs.root, "a");
  const b = fs.makeDir(a, "b");
  const file = fs.makeFile(b, "f");
  fs.makeSymlink(fs.root, "to-b", "a/b");
  fs.makeSymlink(fs.root, "loop", "loop");
  fs.makeSymlink(b, "up-one", "../b/f");
  fs.makeSymlink(b, "up-three", "../../../a/b/f");
  // Only an older tree could hold one (path_symlink refuses them): kept to show it is not followed.
  fs.makeSymlink(fs.root, "abs", "/a/b/f");

  it("follows links in the middle of a path, and at its end only when asked", () => {
    expect(fs.lookup(fs.root, "to-b/f", false).node).toBe(file);
    expect(fs.lookup(fs.root, "to-b", false).node?.kind).toBe("symlink");
    expect(fs.lookup(fs.root, "to-b", true).node).toBe(b);
    expect(fs.lookup(fs.root, "to-b/", false).node).toBe(b); // a trailing slash follows
    expect(fs.lookup(fs.root, "a/b/up-one", true).node).toBe(file);
  });

  it("resolves '..' beneath the directory a path starts from, and no higher", () => {
    expect(fs.lookup(a, "b/../b/./f", false).node).toBe(file);
    expect(fs.lookup(fs.root, "a/b/../../a/b/f", false).node).toBe(file);
    expect(fs.lookup(fs.root, "a/..", false).node).toBe(fs.root);
    expect(errno(() => fs.lookup(fs.root, "..", false))).toBe(Errno.NOTCAPABLE);
    expect(errno(() => fs.lookup(fs.root, "a/../../a", false))).toBe(Errno.NOTCAPABLE);
    expect(errno(() => fs.lookup(b, "../../..", false))).toBe(Errno.NOTCAPABLE);
    // Above the starting directory, though still inside the task's tree.
    expect(errno(() => fs.lookup(b, "../../a/b/f", false))).toBe(Errno.NOTCAPABLE);
    expect(errno(() => fs.lookup(a, "../a", false))).toBe(Errno.NOTCAPABLE);
  });

  it("lets no link lead above the starting directory, nor to an absolute path", () => {
    expect(fs.lookup(fs.root, "a/b/up-three", false).node?.kind).toBe("symlink"); // not followed: fine
    expect(errno(() => fs.lookup(fs.root, "a/b/up-three", true))).toBe(Errno.NOTCAPABLE);
    expect(fs.lookup(a, "b/up-one", true).node).toBe(file);
    // The same link, looked up from its own directory, climbs above it.
    expect(errno(() => fs.lookup(b, "up-one", true))).toBe(Errno.NOTCAPABLE);
    expect(errno(() => fs.lookup(fs.root, "abs", true))).toBe(Errno.NOTCAPABLE);
    expect(errno(() => fs.lookup(fs.root, "abs/x", false))).toBe(Errno.NOTCAPABLE);
  });

  it("answers the POSIX errors", () => {
    expect(errno(() => fs.lookup(fs.root, "loop", true))).toBe(Errno.LOOP);
    expect(errno(() => fs.lookup(fs.root, "a/b/f/", false))).toBe(Errno.NOTDIR);
    expect(errno(() => fs.lookup(fs.root, "a/missing/f", false))).toBe(Errno.NOENT);
    expect(errno(() => fs.lookup(fs.root, "a/b/f/x", false))).toBe(Errno.NOTDIR);
    expect(errno(() => fs.lookup(fs.root, "/a", false))).toBe(Errno.NOTCAPABLE);
    expect(errno(() => fs.lookup(fs.root, "a\0b", false))).toBe(Errno.ILSEQ);
    expect(fs.lookup(fs.root, "a/new", false)).toMatchObject({ dir: a, name: "new", node: undefined });
  });
});

describe("MemoryFs rename", () => {
  it("refuses what POSIX refuses and moves directories with their parent link", () => {
    const { fs } = fsWithBudget();
    const d = fs.makeDir(fs.root, "d");
    const inner = fs.makeDir(d, "inner");
    fs.makeFile(fs.root, "f");
    const full = fs.makeDir(fs.root, "full");
    fs.makeFile(full, "x");
    const at = (path: string) => fs.lookup(fs.root, path, false);
    expect(errno(() => fs.rename(at("d"), at("d/inner/sub")))).toBe(Errno.INVAL);
    expect(errno(() => fs.rename(at("d"), at("full")))).toBe(Errno.NOTEMPTY);
    expect(errno(() => fs.rename(at("f"), at("d")))).toBe(Errno.ISDIR);
    expect(errno(() => fs.rename(at("d"), at("f")))).toBe(Errno.NOTDIR);
    fs.rename(at("d/inner"), at("moved/"));
    expect(inner.parent).toBe(fs.root);
    expect(fs.lookup(fs.root, "moved/..", false).node).toBe(fs.root);
    expect(fs.nlink(fs.root)).toBe(5); // ".", its own entry, and "d", "full", "moved"
  });
});

describe("MemoryFs space", () => {
  it("counts written bytes against the budget and refuses past it", () => {
    const { fs, used } = fsWithBudget(1000);
    const f = fs.makeFile(fs.root, "f");
    fs.write(f, 0, new Uint8Array(600));
    expect(used()).toBe(600);
    expect(errno(() => fs.write(f, 600, new Uint8Array(500)))).toBe(Errno.NOSPC);
    fs.resize(f, 100);
    expect(used()).toBe(100);
  });

  it("keeps an unlinked file's bytes counted while a descriptor holds it open", () => {
    const { fs, used } = fsWithBudget();
    const f = fs.makeFile(fs.root, "f");
    fs.opened(f);
    fs.write(f, 0, new Uint8Array(500));
    fs.detach(fs.root, "f");
    expect(used()).toBe(500);
    fs.closed(f);
    expect(used()).toBe(0);
  });

  it("never changes an input file", () => {
    const { fs } = fsWithBudget();
    fs.addInput("in/data.txt", new Uint8Array([1, 2, 3]));
    const input = (fs.root.entries.get("in") as DirNode).entries.get("data.txt") as FileNode;
    expect(input.readonly).toBe(true);
    expect(errno(() => fs.resize(input, 0))).toBe(Errno.ACCES);
    expect(errno(() => fs.addInput("in/data.txt", new Uint8Array(0)))).toBe(Errno.EXIST);
  });
});
