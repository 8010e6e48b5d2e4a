// A minimal ustar writer: the whole-job download is one archive any `tar` reads, written as it
// streams so a 10,000-task job is never held in memory.

const BLOCK = 512;

function header(name: string, size: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const put = (text: string, at: number, len: number) => h.write(text, at, len, "utf8");
  const octal = (n: number, at: number, len: number) => put(n.toString(8).padStart(len - 1, "0") + "\0", at, len);
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry name too long: ${name}`);
  put(name, 0, 100);
  octal(0o644, 100, 8);
  octal(0, 108, 8);
  octal(0, 116, 8);
  octal(size, 124, 12);
  octal(Math.floor(mtime / 1000), 136, 12);
  put("        ", 148, 8); // the checksum counts its own field as spaces
  put("0", 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/** One file of the archive: its header, its bytes, and zeros to the next block. */
export function tarEntry(name: string, data: Uint8Array, mtime: number): Buffer[] {
  const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
  return [header(name, data.length, mtime), Buffer.from(data.buffer, data.byteOffset, data.byteLength), Buffer.alloc(pad)];
}

/** Two empty blocks end an archive. */
export const tarEnd = () => Buffer.alloc(2 * BLOCK);
