// The CPU limit inside a task. A thread running WebAssembly cannot be paused from outside, and a
// module that computes without calling WASI never hands control back. So, for a machine whose
// producer set a CPU limit, the module is rewritten before it is compiled to call the host's
// `cyclemarket.pace` import now and then; the import measures how long the task ran since its last
// rest and sleeps for the matching share (controls/pacer.ts). Two countdowns decide when: each
// function gets a new local, counted down at every iteration of its loops (a local stays in a
// register, so a tight loop pays far less than with a global); and one new
// global is counted down at every function entry, so code that spends its time in calls of short
// functions is paced too. The module's own behaviour is unchanged: the checks touch only the new
// local and global, and leave the stack as they found it.
//
// The rewrite appends one function type, one imported function (so every defined function's
// index moves up by one: calls, exports, the start function, element segments and ref.func are
// renumbered), one global and one local per function; it drops the "name" section, whose
// function indices would be stale. Instructions the rewriter does not know (the GC proposal's) make it decline: the task
// then runs unpaced and the slot rests after it instead.
import { Reader, WasmFormatError, leb, readWasm, sections, type Section } from "./wasm-binary.ts";

/** The import the paced module calls; the sandbox provides it only to paced modules. */
export const PACE_IMPORT = { module: "cyclemarket", name: "pace" } as const;

/** Loop iterations in one function call between two calls of the pace import. */
export const PACE_LOOP_COUNTDOWN = 10_000;
/** Function calls between two calls of the pace import. */
export const PACE_CALL_COUNTDOWN = 1_000;

/** The module cannot be paced (it uses instructions or types the rewriter does not know). */
export class PaceUnsupported extends Error {}

const SECTION_CUSTOM = 0;
const SECTION_TYPE = 1;
const SECTION_IMPORT = 2;
const SECTION_GLOBAL = 6;
const SECTION_EXPORT = 7;
const SECTION_START = 8;
const SECTION_ELEMENT = 9;
const SECTION_CODE = 10;

/** Where a new section goes among the standard ones (the tag section sits between memory and global). */
const SECTION_ORDER = [SECTION_TYPE, SECTION_IMPORT, 3, 4, 5, 13, SECTION_GLOBAL, SECTION_EXPORT, SECTION_START, SECTION_ELEMENT, 12, SECTION_CODE, 11];

function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (b & 0x40) === 0) || (value === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

function skipLeb(r: Reader): void {
  for (let i = 0; i < 10; i++) if ((r.byte() & 0x80) === 0) return;
  throw new WasmFormatError("LEB128 number too long");
}

function skipMemarg(r: Reader): void {
  const align = r.u();
  if (align & 0x40) r.u(); // a memory index (multiple memories)
  skipLeb(r); // offset, up to 64 bits
}

function skipBlockType(r: Reader): void {
  const b = r.bytes[r.pos];
  if (b === 0x63 || b === 0x64) {
    r.pos++;
    r.s33();
  } else r.s33(); // empty (0x40), a one-byte value type, or a type index
}

interface Context {
  /** Function imports before the new one: indices from here on move up by one. */
  importedFunctions: number;
  /** The check inserted at loop headers (it names the function's own countdown local). */
  check: number[];
}

const remap = (ctx: Context, index: number) => (index >= ctx.importedFunctions ? index + 1 : index);

/**
 * Copies instructions from `r` to `out`, renumbering function indices and inserting the check
 * after every `loop`. Stops after the `end` that closes depth 0 (a constant expression or a
 * function body).
 */
function copyInstructions(r: Reader, out: number[], ctx: Context): void {
  let depth = 0;
  for (;;) {
    const start = r.pos;
    const op = r.byte();
    let replaced: number[] | null = null;
    switch (op) {
      case 0x02: // block
      case 0x04: // if
      case 0x06: // try
        skipBlockType(r);
        depth++;
        break;
      case 0x03: // loop
        skipBlockType(r);
        depth++;
        replaced = [...r.bytes.subarray(start, r.pos)];
        append(replaced, ctx.check);
        break;
      case 0x1f: {
        // try_table
        skipBlockType(r);
        const n = r.u();
        for (let i = 0; i < n; i++) {
          const kind = r.byte();
          if (kind === 0 || kind === 1) r.u(); // the tag
          r.u(); // the label
        }
        depth++;
        break;
      }
      case 0x0b: // end
        if (depth === 0) {
          out.push(op);
          return;
        }
        depth--;
        break;
      case 0x10: // call
      case 0x12: // return_call
      case 0xd2: // ref.func
        replaced = [op, ...leb(remap(ctx, r.u()))];
        break;
      case 0x07: // catch
      case 0x08: // throw
      case 0x09: // rethrow
      case 0x0c: // br
      case 0x0d: // br_if
      case 0x14: // call_ref
      case 0x15: // return_call_ref
      case 0x18: // delegate
      case 0x20: // local.get
      case 0x21: // local.set
      case 0x22: // local.tee
      case 0x23: // global.get
      case 0x24: // global.set
      case 0x25: // table.get
      case 0x26: // table.set
      case 0x3f: // memory.size
      case 0x40: // memory.grow
      case 0xd4: // br_on_null
      case 0xd6: // br_on_non_null
        r.u();
        break;
      case 0x0e: {
        // br_table
        const n = r.u();
        for (let i = 0; i <= n; i++) r.u();
        break;
      }
      case 0x11: // call_indirect
      case 0x13: // return_call_indirect
        r.u();
        r.u();
        break;
      case 0x1c: {
        // select with types
        const n = r.u();
        for (let i = 0; i < n; i++) r.skipValType();
        break;
      }
      case 0x41: // i32.const
      case 0x42: // i64.const
        skipLeb(r);
        break;
      case 0x43: // f32.const
        r.pos += 4;
        break;
      case 0x44: // f64.const
        r.pos += 8;
        break;
      case 0xd0: // ref.null
        r.s33();
        break;
      case 0xfc:
        skipPrefixedFC(r, r.u());
        break;
      case 0xfd:
        skipPrefixedSimd(r, r.u());
        break;
      case 0xfe: {
        // threads
        const sub = r.u();
        if (sub === 0x03) r.byte(); // atomic.fence
        else skipMemarg(r);
        break;
      }
      default:
        if (op >= 0x28 && op <= 0x3e) skipMemarg(r); // loads and stores
        else if (!(op <= 0x01 || op === 0x05 || op === 0x0a || op === 0x0f || op === 0x19 || op === 0x1a || op === 0x1b || (op >= 0x45 && op <= 0xc4) || op === 0xd1 || op === 0xd3 || op === 0xd5)) {
          throw new PaceUnsupported(`instruction 0x${op.toString(16)} is not known to the pacer`);
        }
    }
    if (r.pos > r.end) throw new WasmFormatError("an instruction runs past its section");
    if (replaced) append(out, replaced);
    else for (let i = start; i < r.pos; i++) out.push(r.bytes[i]!);
  }
}

function skipPrefixedFC(r: Reader, sub: number): void {
  if (sub <= 7) return; // saturating truncations
  if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
    r.u();
    r.u();
  } else if (sub <= 17) r.u();
  else throw new PaceUnsupported(`instruction 0xfc ${sub} is not known to the pacer`);
}

function skipPrefixedSimd(r: Reader, sub: number): void {
  if (sub <= 11 || sub === 92 || sub === 93) skipMemarg(r);
  else if (sub === 12 || sub === 13) r.pos += 16;
  else if (sub >= 21 && sub <= 34) r.byte();
  else if (sub >= 84 && sub <= 91) {
    skipMemarg(r);
    r.byte();
  }
}

/** Appends without spreading (a large function body would overflow the call stack). */
function append(out: number[], items: ArrayLike<number>): void {
  for (let i = 0; i < items.length; i++) out.push(items[i]!);
}

function vectorSection(id: number, count: number, body: number[]): number[] {
  const countBytes = leb(count);
  const out = [id, ...leb(countBytes.length + body.length), ...countBytes];
  append(out, body);
  return out;
}

function copyRange(bytes: Uint8Array, from: number, to: number, out: number[]): void {
  for (let i = from; i < to; i++) out.push(bytes[i]!);
}

/**
 * Returns the module rewritten to call `cyclemarket.pace` every PACE_LOOP_COUNTDOWN iterations of
 * a function's loops and every PACE_CALL_COUNTDOWN function calls. Throws PaceUnsupported when it cannot, WasmFormatError on a broken module.
 */
export function paceModule(bytes: Uint8Array): Uint8Array {
  const all = sections(bytes);
  const find = (id: number) => all.find((s) => s.id === id);
  // Imports by kind and each function's signature, as the upload check reads them.
  const summary = readWasm(bytes);
  const importedFunctions = summary.imports.filter((i) => i.kind === "function").length;
  const importedGlobals = summary.imports.filter((i) => i.kind === "global").length;

  // Types: count them, append () -> ().
  const typeSection = find(SECTION_TYPE);
  let typeCount = 0;
  const typeBody: number[] = [];
  if (typeSection) {
    const r = new Reader(bytes, typeSection.start, typeSection.end);
    typeCount = r.u();
    const entriesStart = r.pos;
    for (let i = 0; i < typeCount; i++) {
      if (r.byte() !== 0x60) throw new PaceUnsupported("the module declares GC types");
      for (let k = 0; k < 2; k++) {
        const n = r.u();
        for (let p = 0; p < n; p++) r.skipValType();
      }
    }
    copyRange(bytes, entriesStart, typeSection.end, typeBody);
  }
  const paceType = typeCount;
  typeBody.push(0x60, 0x00, 0x00);

  // Imports: the pace function goes after the existing ones.
  const importSection = find(SECTION_IMPORT);
  const importCount = summary.imports.length;
  const importBody: number[] = [];
  if (importSection) {
    const r = new Reader(bytes, importSection.start, importSection.end);
    r.u();
    copyRange(bytes, r.pos, importSection.end, importBody);
  }
  const name = (s: string) => {
    const b = new TextEncoder().encode(s);
    return [...leb(b.length), ...b];
  };
  importBody.push(...name(PACE_IMPORT.module), ...name(PACE_IMPORT.name), 0x00, ...leb(paceType));
  const paceFunction = importedFunctions;

  // Globals: the countdown goes after the existing ones; their init expressions may use ref.func.
  const globalSection = find(SECTION_GLOBAL);
  // (Constant expressions hold no loops: only the renumbering applies to them.)
  const renumberOnly: Context = { importedFunctions, check: [] };
  let globalCount = 0;
  const globalBody: number[] = [];
  if (globalSection) {
    const r = new Reader(bytes, globalSection.start, globalSection.end);
    globalCount = r.u();
    for (let i = 0; i < globalCount; i++) {
      const typeStart = r.pos;
      r.skipValType();
      r.byte();
      copyRange(bytes, typeStart, r.pos, globalBody);
      copyInstructions(r, globalBody, renumberOnly);
    }
  }
  const calls = importedGlobals + globalCount;
  globalBody.push(0x7f, 0x01, 0x41, ...sleb(PACE_CALL_COUNTDOWN), 0x0b);
  const pace = [0x10, ...leb(paceFunction)];
  // calls -= 1; if (calls == 0) { calls = N; pace(); }
  const entryCheck = [
    ...[0x23, ...leb(calls), 0x41, 0x01, 0x6b, 0x24, ...leb(calls)],
    ...[0x23, ...leb(calls), 0x45, 0x04, 0x40],
    ...[0x41, ...sleb(PACE_CALL_COUNTDOWN), 0x24, ...leb(calls), ...pace, 0x0b],
  ];
  // local = N (at entry); in each loop: local -= 1; if (local == 0) { local = N; pace(); }
  const localStart = (local: number) => [0x41, ...sleb(PACE_LOOP_COUNTDOWN), 0x21, ...leb(local)];
  const loopCheck = (local: number) => [
    ...[0x20, ...leb(local), 0x41, 0x01, 0x6b, 0x22, ...leb(local), 0x45, 0x04, 0x40],
    ...localStart(local), ...pace, 0x0b,
  ];
  const ctx: Context = { importedFunctions, check: [] };

  const rewritten = new Map<Section, number[]>();
  if (typeSection) rewritten.set(typeSection, vectorSection(SECTION_TYPE, typeCount + 1, typeBody));
  if (importSection) rewritten.set(importSection, vectorSection(SECTION_IMPORT, importCount + 1, importBody));
  if (globalSection) rewritten.set(globalSection, vectorSection(SECTION_GLOBAL, globalCount + 1, globalBody));

  for (const s of all) {
    const r = new Reader(bytes, s.start, s.end);
    if (s.id === SECTION_CUSTOM) {
      if (r.name() === "name") rewritten.set(s, []);
    } else if (s.id === SECTION_EXPORT) {
      const count = r.u();
      const body: number[] = [];
      for (let i = 0; i < count; i++) {
        const nameStart = r.pos;
        r.name();
        copyRange(bytes, nameStart, r.pos, body);
        const kind = r.byte();
        const index = r.u();
        body.push(kind, ...leb(kind === 0 ? remap(ctx, index) : index));
      }
      rewritten.set(s, vectorSection(SECTION_EXPORT, count, body));
    } else if (s.id === SECTION_START) {
      const content = leb(remap(ctx, r.u()));
      rewritten.set(s, [SECTION_START, ...leb(content.length), ...content]);
    } else if (s.id === SECTION_ELEMENT) {
      rewritten.set(s, rewriteElements(r, ctx));
    } else if (s.id === SECTION_CODE) {
      const count = r.u();
      const body: number[] = [];
      for (let i = 0; i < count; i++) {
        const size = r.u();
        const end = r.pos + size;
        const fn = new Reader(bytes, r.pos, end);
        const groups = fn.u();
        const groupsStart = fn.pos;
        // Its countdown local comes after the function's parameters and its own locals.
        let countdown = summary.functionSignature(importedFunctions + i)?.params ?? 0;
        for (let l = 0; l < groups; l++) {
          countdown += fn.u();
          fn.skipValType();
        }
        const code: number[] = leb(groups + 1);
        copyRange(bytes, groupsStart, fn.pos, code);
        code.push(0x01, 0x7f); // one more i32 local: the loop countdown
        append(code, entryCheck);
        append(code, localStart(countdown));
        ctx.check = loopCheck(countdown);
        copyInstructions(fn, code, ctx);
        if (fn.pos !== end) throw new WasmFormatError("a function body does not end where its size says");
        append(body, leb(code.length));
        append(body, code);
        r.pos = end;
      }
      rewritten.set(s, vectorSection(SECTION_CODE, count, body));
    }
  }

  // Sections the module lacks are added in their place.
  const added = new Map<number, number[]>();
  if (!typeSection) added.set(SECTION_TYPE, vectorSection(SECTION_TYPE, 1, typeBody));
  if (!importSection) added.set(SECTION_IMPORT, vectorSection(SECTION_IMPORT, 1, importBody));
  if (!globalSection) added.set(SECTION_GLOBAL, vectorSection(SECTION_GLOBAL, 1, globalBody));

  const out: number[] = [];
  copyRange(bytes, 0, 8, out);
  const rank = (id: number) => SECTION_ORDER.indexOf(id);
  const flushBefore = (id: number) => {
    for (const [addedId, content] of [...added]) {
      if (id === -1 || rank(addedId) < rank(id)) {
        append(out, content);
        added.delete(addedId);
      }
    }
  };
  for (const s of all) {
    if (s.id !== SECTION_CUSTOM) flushBefore(s.id);
    const content = rewritten.get(s);
    if (content) append(out, content);
    else copyRange(bytes, s.headerStart, s.end, out);
  }
  flushBefore(-1);
  return new Uint8Array(out);
}

function rewriteElements(r: Reader, ctx: Context): number[] {
  const count = r.u();
  const body: number[] = [];
  const copyFrom = (start: number) => copyRange(r.bytes, start, r.pos, body);
  const functionIndices = () => {
    const n = r.u();
    body.push(...leb(n));
    for (let i = 0; i < n; i++) body.push(...leb(remap(ctx, r.u())));
  };
  const expressions = () => {
    const n = r.u();
    body.push(...leb(n));
    for (let i = 0; i < n; i++) copyInstructions(r, body, ctx);
  };
  for (let i = 0; i < count; i++) {
    const flags = r.u();
    body.push(...leb(flags));
    let start = r.pos;
    if (flags === 2 || flags === 6) {
      r.u(); // table
      copyFrom(start);
    }
    if (flags === 0 || flags === 2 || flags === 4 || flags === 6) copyInstructions(r, body, ctx); // offset
    start = r.pos;
    if (flags === 1 || flags === 2 || flags === 3) r.byte(); // element kind
    else if (flags === 5 || flags === 6 || flags === 7) r.skipValType(); // reference type
    else if (flags > 7) throw new WasmFormatError(`unknown element segment form ${flags}`);
    copyFrom(start);
    if (flags < 4) functionIndices();
    else expressions();
  }
  return vectorSection(SECTION_ELEMENT, count, body);
}
