import { describe, expect, it } from "vitest";
import { exampleBytes, importingWat, wat } from "./testing/fixtures.ts";
import { ALLOWED_WASI_IMPORTS, describeModuleRefusal, validateModule, type ModuleValidation } from "./validate.ts";

const limits = { maxBytes: 1 << 20, maxMemoryPages: 256 };

function reason(v: ModuleValidation) {
  if (v.ok) throw new Error("expected a rejection");
  return v.reason;
}

describe("validateModule", () => {
  it("accepts every shipped example and describes its imports and memory", () => {
    for (const name of ["montecarlo", "mandelbrot", "primes"] as const) {
      const v = validateModule(exampleBytes(name), limits);
      expect(v.ok).toBe(true);
      if (v.ok) {
        expect(v.info.exportsStart).toBe(true);
        expect(v.info.imports.every((i) => i.module === "wasi_snapshot_preview1")).toBe(true);
        expect(v.info.memory.initialPages).toBeGreaterThan(0);
      }
    }
  });

  it("refuses bytes that are not WebAssembly", () => {
    const r = reason(validateModule(new TextEncoder().encode("MZ this is an executable"), limits));
    expect(r).toEqual({ code: "not-wasm", bytes: 24 });
    expect(describeModuleRefusal(r)).toMatch(/not a WebAssembly module/);
  });

  it("refuses a truncated module as invalid", () => {
    const bytes = exampleBytes("primes");
    expect(reason(validateModule(bytes.subarray(0, bytes.length - 10), limits)).code).toBe("invalid-wasm");
  });

  it("refuses imports from outside WASI, such as env.abort", () => {
    const r = reason(validateModule(wat(importingWat("env", "abort")), limits));
    expect(r).toEqual({ code: "forbidden-import", module: "env", name: "abort", kind: "function" });
    expect(describeModuleRefusal(r)).toContain("env.abort");
  });

  it("refuses WASI functions outside preview 1, such as opening a socket", () => {
    const r = reason(validateModule(wat(importingWat("wasi_snapshot_preview1", "sock_open")), limits));
    expect(r).toMatchObject({ code: "forbidden-import", name: "sock_open" });
    expect(ALLOWED_WASI_IMPORTS).not.toContain("sock_open");
  });

  it("takes a module that imports preview 1's socket calls (they answer as a host without network)", () => {
    expect(validateModule(wat(importingWat("wasi_snapshot_preview1", "sock_shutdown")), limits).ok).toBe(true);
  });

  it("refuses an oversized module before looking inside", () => {
    const bytes = exampleBytes("montecarlo");
    const r = reason(validateModule(bytes, { ...limits, maxBytes: 1000 }));
    expect(r).toEqual({ code: "too-large", bytes: bytes.length, maxBytes: 1000 });
    expect(describeModuleRefusal(r)).toMatch(/over the limit of 1000 bytes/);
  });

  it("refuses a library module without _start", () => {
    const r = reason(validateModule(wat(`(module (memory (export "memory") 1) (func (export "main")))`), limits));
    expect(r.code).toBe("no-start");
  });

  it("refuses a _start that takes arguments", () => {
    const r = reason(validateModule(wat(`(module (memory (export "memory") 1) (func (export "_start") (param i32)))`), limits));
    expect(r).toEqual({ code: "bad-start-signature", params: 1, results: 0 });
  });

  it("refuses a module without exported memory", () => {
    expect(reason(validateModule(wat(`(module (func (export "_start")))`), limits)).code).toBe("no-memory");
  });

  it("refuses a module whose memory starts above the limit", () => {
    const r = reason(validateModule(wat(`(module (memory (export "memory") 300) (func (export "_start")))`), limits));
    expect(r).toEqual({ code: "memory-too-large", initialPages: 300, maxMemoryPages: 256 });
    expect(describeModuleRefusal(r)).toContain("18.8 MiB");
  });

  it("has a sentence for every rejection code", () => {
    const reasons = [
      { code: "invalid-wasm", detail: "x" },
      { code: "unsupported-memory", feature: "shared" },
      { code: "unsupported-memory", feature: "memory64" },
      { code: "unsupported-memory", feature: "several" },
    ] as const;
    for (const r of reasons) expect(describeModuleRefusal(r)).toMatch(/^The .*\.$/);
  });
});
