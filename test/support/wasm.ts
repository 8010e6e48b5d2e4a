// Hand-assembled WebAssembly modules for tests of what the market refuses or accepts.

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
};
const str = (s: string) => {
  const b = [...new TextEncoder().encode(s)];
  return [...leb(b.length), ...b];
};
const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];

/**
 * A command module (`_start`, one page of exported memory) whose only import is
 * `module.name` as a function of no arguments; `_start` does nothing.
 */
export function moduleImporting(module: string, name: string): Uint8Array {
  const types = section(1, vec([[0x60, 0, 0]]));
  const imports = section(2, vec([[...str(module), ...str(name), 0x00, 0]]));
  const funcs = section(3, vec([[0]]));
  const memory = section(5, vec([[0x00, 1]]));
  const exports = section(7, vec([[...str("_start"), 0x00, 1], [...str("memory"), 0x02, 0]]));
  const code = section(10, vec([[...leb(2), 0x00, 0x0b]]));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...types, ...imports, ...funcs, ...memory, ...exports, ...code]);
}

/** A valid command module padded with a custom section to `size` bytes. */
export function paddedModule(size: number): Uint8Array {
  const base = moduleImporting("wasi_snapshot_preview1", "proc_exit");
  const name = str("padding");
  const room = size - base.length - 1 - 5 - name.length;
  const body = [...name, ...new Array(Math.max(0, room)).fill(0)];
  // A fixed five-byte length keeps the arithmetic above exact.
  const len = body.length;
  const fixedLeb = [(len & 0x7f) | 0x80, ((len >> 7) & 0x7f) | 0x80, ((len >> 14) & 0x7f) | 0x80, ((len >> 21) & 0x7f) | 0x80, (len >> 28) & 0x0f];
  return new Uint8Array([...base, 0, ...fixedLeb, ...body]);
}
