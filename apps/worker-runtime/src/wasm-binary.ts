// Reads the few parts of a WebAssembly binary the market cares about (imports, exports,
// memories, the _start signature) and rewrites the memory maximum, without compiling.
// Compiling is left to WebAssembly itself; this reader only walks section headers, so it
// stays small and runs the same in the browser and in Node.

export type ExternKind = "function" | "table" | "memory" | "global" | "tag";

export interface WasmImport {
  module: string;
  name: string;
  kind: ExternKind;
}

export interface WasmExport {
  name: string;
  kind: ExternKind;
  index: number;
}

export interface WasmMemory {
  initialPages: number;
  maximumPages: number | null;
  shared: boolean;
  memory64: boolean;
  imported: boolean;
}

export interface WasmSummary {
  imports: WasmImport[];
  exports: WasmExport[];
  memories: WasmMemory[];
  /** Function signatures by function index, null where the type form is not a plain function type. */
  functionSignature(index: number): { params: number; results: number } | null;
}

/** Thrown when the bytes are not a well-formed WebAssembly binary header or section list. */
export class WasmFormatError extends Error {}

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const WASM_VERSION = [0x01, 0x00, 0x00, 0x00];
export const PAGE_BYTES = 65536;

const KINDS: ExternKind[] = ["function", "table", "memory", "global", "tag"];

const SECTION_TYPE = 1;
const SECTION_IMPORT = 2;
const SECTION_FUNCTION = 3;
const SECTION_MEMORY = 5;
const SECTION_EXPORT = 7;

export function hasWasmHeader(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  for (let i = 0; i < 4; i++) if (bytes[i] !== WASM_MAGIC[i] || bytes[i + 4] !== WASM_VERSION[i]) return false;
  return true;
}

/** A cursor over a module's bytes (shared with wasm-pace.ts, which rewrites code). */
export class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {}

  byte(): number {
    if (this.pos >= this.end) throw new WasmFormatError("unexpected end of section");
    return this.bytes[this.pos++]!;
  }

  /** Unsigned LEB128; values past 2^53 lose precision, which page counts never reach. */
  u(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new WasmFormatError("LEB128 number too long");
  }

  name(): string {
    const len = this.u();
    if (this.pos + len > this.end) throw new WasmFormatError("name runs past its section");
    const s = new TextDecoder("utf-8", { fatal: false }).decode(this.bytes.subarray(this.pos, this.pos + len));
    this.pos += len;
    return s;
  }

  limits(): { flags: number; min: number; max: number | null } {
    const flags = this.byte();
    const min = this.u();
    const max = flags & 0x01 ? this.u() : null;
    return { flags, min, max };
  }

  skipValType(): void {
    const t = this.byte();
    // (ref null? ht) carries a heap type after the prefix.
    if (t === 0x63 || t === 0x64) this.s33();
  }

  s33(): void {
    for (let i = 0; i < 5; i++) if ((this.byte() & 0x80) === 0) return;
    throw new WasmFormatError("LEB128 number too long");
  }
}

export interface Section {
  id: number;
  start: number; // first byte of the section's contents
  end: number;
  headerStart: number; // the id byte
}

export function sections(bytes: Uint8Array): Section[] {
  if (!hasWasmHeader(bytes)) throw new WasmFormatError("missing WebAssembly header");
  const out: Section[] = [];
  const r = new Reader(bytes, 8, bytes.length);
  while (r.pos < bytes.length) {
    const headerStart = r.pos;
    const id = r.byte();
    const size = r.u();
    const start = r.pos;
    if (start + size > bytes.length) throw new WasmFormatError(`section ${id} runs past the end of the module`);
    out.push({ id, start, end: start + size, headerStart });
    r.pos = start + size;
  }
  return out;
}

export function readWasm(bytes: Uint8Array): WasmSummary {
  const imports: WasmImport[] = [];
  const exports: WasmExport[] = [];
  const memories: WasmMemory[] = [];
  const types: ({ params: number; results: number } | null)[] = [];
  const funcTypes: number[] = []; // by function index, imported first

  for (const s of sections(bytes)) {
    const r = new Reader(bytes, s.start, s.end);
    if (s.id === SECTION_TYPE) {
      const count = r.u();
      for (let i = 0; i < count; i++) {
        const form = r.byte();
        if (form !== 0x60) {
          // Recursive or sub types (GC proposal): stop reading signatures, they are not needed to run WASI.
          break;
        }
        const params = r.u();
        for (let p = 0; p < params; p++) r.skipValType();
        const results = r.u();
        for (let p = 0; p < results; p++) r.skipValType();
        types.push({ params, results });
      }
    } else if (s.id === SECTION_IMPORT) {
      const count = r.u();
      for (let i = 0; i < count; i++) {
        const module = r.name();
        const name = r.name();
        const kindByte = r.byte();
        const kind = KINDS[kindByte];
        if (!kind) throw new WasmFormatError(`unknown import kind ${kindByte}`);
        imports.push({ module, name, kind });
        if (kind === "function") funcTypes.push(r.u());
        else if (kind === "table") {
          r.skipValType();
          r.limits();
        } else if (kind === "memory") {
          const l = r.limits();
          memories.push({ initialPages: l.min, maximumPages: l.max, shared: (l.flags & 2) !== 0, memory64: (l.flags & 4) !== 0, imported: true });
        } else if (kind === "global") {
          r.skipValType();
          r.byte();
        } else {
          r.byte();
          r.u();
        }
      }
    } else if (s.id === SECTION_FUNCTION) {
      const count = r.u();
      for (let i = 0; i < count; i++) funcTypes.push(r.u());
    } else if (s.id === SECTION_MEMORY) {
      const count = r.u();
      for (let i = 0; i < count; i++) {
        const l = r.limits();
        memories.push({ initialPages: l.min, maximumPages: l.max, shared: (l.flags & 2) !== 0, memory64: (l.flags & 4) !== 0, imported: false });
      }
    } else if (s.id === SECTION_EXPORT) {
      const count = r.u();
      for (let i = 0; i < count; i++) {
        const name = r.name();
        const kindByte = r.byte();
        const kind = KINDS[kindByte];
        if (!kind) throw new WasmFormatError(`unknown export kind ${kindByte}`);
        exports.push({ name, kind, index: r.u() });
      }
    }
  }

  return {
    imports,
    exports,
    memories,
    functionSignature(index) {
      const t = funcTypes[index];
      return t === undefined ? null : (types[t] ?? null);
    },
  };
}

export function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let b = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) b |= 0x80;
    out.push(b);
  } while (value > 0);
  return out;
}

/**
 * Returns a copy of the module whose defined memories may grow to at most `maxPages`:
 * the engine then refuses memory.grow past the limit, which is how the sandbox enforces
 * a task's memory limit in every browser and in Node. Throws when a memory starts above it.
 */
export function capMemory(bytes: Uint8Array, maxPages: number): Uint8Array {
  const memory = sections(bytes).find((s) => s.id === SECTION_MEMORY);
  if (!memory) return bytes;
  const r = new Reader(bytes, memory.start, memory.end);
  const count = r.u();
  const body: number[] = [...leb(count)];
  for (let i = 0; i < count; i++) {
    const l = r.limits();
    if (l.min > maxPages) throw new MemoryLimitError(l.min, maxPages);
    const max = l.max === null ? maxPages : Math.min(l.max, maxPages);
    body.push(l.flags | 0x01, ...leb(l.min), ...leb(max));
  }
  const header = [SECTION_MEMORY, ...leb(body.length)];
  const out = new Uint8Array(memory.headerStart + header.length + body.length + (bytes.length - memory.end));
  out.set(bytes.subarray(0, memory.headerStart), 0);
  out.set(header, memory.headerStart);
  out.set(body, memory.headerStart + header.length);
  out.set(bytes.subarray(memory.end), memory.headerStart + header.length + body.length);
  return out;
}

export class MemoryLimitError extends Error {
  constructor(
    readonly initialPages: number,
    readonly maxPages: number,
  ) {
    super(`the module starts with ${initialPages} memory pages, above the limit of ${maxPages}`);
  }
}
