import { resolve } from "node:path";

// The C example with binary stdout (apps/worker-runtime/examples/c/bytepattern.c) and the bytes
// it must write, computed here from its header comment so the tests need no clang.

export const BYTEPATTERN_WASM = resolve(import.meta.dirname, "../../apps/worker-runtime/examples/c/bytepattern.wasm");

const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
};

/** What `bytepattern n` writes with this stdin. */
export function bytepatternOutput(n: number, stdin: Buffer): Buffer {
  const pattern = Buffer.from(Array.from({ length: 256 }, (_, k) => (k * (2 * n + 1) + n) & 0xff));
  const key = 0xa5 ^ (n & 0xff);
  let hash = 2166136261;
  for (const b of stdin) hash = Math.imul(hash ^ b, 16777619) >>> 0;
  return Buffer.concat([Buffer.from([0x89, 0x43, 0x4d, 0x00]), u32(n), u32(stdin.length), pattern, Buffer.from(stdin.map((b) => b ^ key)), u32(hash)]);
}
