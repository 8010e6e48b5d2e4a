// Test helpers: small modules written as WebAssembly text, and the built examples.
import binaryen from "assemblyscript/binaryen";
import { readFileSync } from "node:fs";
import type { ExampleName } from "../examples.ts";

/** Assembles WebAssembly text into a binary. */
export function wat(text: string): Uint8Array {
  const module = binaryen.parseText(text);
  try {
    if (!module.validate()) throw new Error("invalid test module");
    return module.emitBinary();
  } finally {
    module.dispose();
  }
}

export function exampleBytes(name: ExampleName): Uint8Array {
  const url = new URL(`../../examples/build/${name}.wasm`, import.meta.url);
  try {
    return new Uint8Array(readFileSync(url));
  } catch {
    throw new Error(`examples/build/${name}.wasm is missing: run npm run build:examples -w @cyclemarket/worker-runtime`);
  }
}

const WASI = "wasi_snapshot_preview1";

/** Spins forever. */
export const LOOP_WAT = `(module
  (memory (export "memory") 1)
  (func (export "_start") (loop $l (br $l))))`;

/** Writes a 1 KiB buffer to stdout forever. */
export const FLOOD_WAT = `(module
  (import "${WASI}" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\\10\\00\\00\\00\\00\\04\\00\\00")
  (func (export "_start")
    (loop $l (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) (br $l))))`;

/** Grows its memory a page at a time until refused, then traps as a program out of memory would. */
export const MEMORY_HOG_WAT = `(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    unreachable))`;

/** Copies stdin to stdout. */
export const CAT_WAT = `(module
  (import "${WASI}" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "${WASI}" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $n i32)
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 4096))
    (loop $l
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
      (local.set $n (i32.load (i32.const 16)))
      (if (i32.gt_u (local.get $n) (i32.const 0)) (then
        (i32.store (i32.const 8) (i32.const 64))
        (i32.store (i32.const 12) (local.get $n))
        (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 20)))
        (br $l))))))`;

/** Prints the file "data/in.txt" from the preopened directory (fd 3). */
export const READ_FILE_WAT = `(module
  (import "${WASI}" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "${WASI}" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "${WASI}" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "${WASI}" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "data/in.txt")
  ;; rights: fd_read only; asking for more than the directory hands down is ENOTCAPABLE
  (func (export "_start") (local $fd i32)
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 11) (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 200))
      (then (call $proc_exit (i32.const 3))))
    (local.set $fd (i32.load (i32.const 200)))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 4096))
    (drop (call $fd_read (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 16)))
    (i32.store (i32.const 8) (i32.const 1024))
    (i32.store (i32.const 12) (i32.load (i32.const 16)))
    (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 20)))))`;

/** Prints 16 random bytes and the realtime and monotonic clocks, raw. */
export const ENTROPY_WAT = `(module
  (import "${WASI}" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "${WASI}" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "${WASI}" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $random_get (i32.const 64) (i32.const 16)))
    (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 80)))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 88)))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 32))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))`;

/** A module importing `module.name` as a function, otherwise a valid command. */
export function importingWat(module: string, name: string): string {
  return `(module
  (import "${module}" "${name}" (func $f (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $f (i32.const 0))))`;
}
