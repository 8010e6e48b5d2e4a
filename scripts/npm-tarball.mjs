// Writes an npm package tarball (what `npm pack` makes: a gzipped ustar archive whose entries sit
// under `package/`), so the Market Manager can serve its own worker and client to `npx` and
// `npm install` on machines that have only Node. Every entry gets one fixed time and owner, so
// the same files always give the same bytes (and the same integrity hash in a lockfile).
import { createHash } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { gzipSync } from "node:zlib";

const BLOCK = 512;
// The time npm itself gives every entry of a packed tarball.
const MTIME = Date.UTC(1985, 9, 26, 8, 15) / 1000;

function header(name, size, mode) {
  const h = Buffer.alloc(BLOCK);
  const put = (text, at, len) => h.write(text, at, len, "utf8");
  const octal = (n, at, len) => put(n.toString(8).padStart(len - 1, "0") + "\0", at, len);
  let prefix = "";
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    // ustar splits a long path at a slash: up to 155 bytes of folders, then up to 100 of name.
    const cut = name.lastIndexOf("/", 155);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
    if (cut <= 0 || Buffer.byteLength(base) > 100 || Buffer.byteLength(prefix) > 155) throw new Error(`path too long for a tarball: ${name}`);
  }
  put(base, 0, 100);
  octal(mode, 100, 8);
  octal(0, 108, 8);
  octal(0, 116, 8);
  octal(size, 124, 12);
  octal(MTIME, 136, 12);
  put("        ", 148, 8); // the checksum counts its own field as spaces
  put("0", 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/**
 * The tarball of a package made of `files` (path inside the package, bytes, and 0o755 for a
 * program), sorted by path.
 */
export function npmTarball(files) {
  const parts = [];
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const data = typeof f.data === "string" ? Buffer.from(f.data) : Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength);
    parts.push(header(`package/${f.path}`, data.length, f.mode ?? 0o644), data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}

/** Writes the tarball beside its place and renames it in, so a download never reads half of one. */
export async function writeTarball(path, files) {
  const bytes = npmTarball(files);
  const temporary = `${path}.${process.pid}.tmp`;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(temporary, bytes);
  await rename(temporary, path);
  return { bytes: bytes.length, sha512: createHash("sha512").update(bytes).digest("base64") };
}
