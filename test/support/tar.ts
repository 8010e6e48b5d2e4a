// Reads a ustar archive into its files, to check what the market's download holds.
export function untar(archive: Uint8Array): Map<string, Buffer> {
  const buf = Buffer.from(archive);
  const files = new Map<string, Buffer>();
  for (let at = 0; at + 512 <= buf.length; ) {
    const name = buf.subarray(at, at + 100).toString("utf8").replace(/\0.*$/s, "");
    if (!name) break;
    const size = parseInt(buf.subarray(at + 124, at + 136).toString("utf8").replace(/\0.*$/s, "").trim(), 8);
    files.set(name, buf.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
