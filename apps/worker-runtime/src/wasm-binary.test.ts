import { describe, expect, it } from "vitest";
import { exampleBytes, wat } from "./testing/fixtures.ts";
import { MemoryLimitError, capMemory, readWasm } from "./wasm-binary.ts";

describe("capMemory", () => {
  it("writes the limit as the memory maximum and leaves the rest of the module intact", async () => {
    const bytes = exampleBytes("mandelbrot");
    const capped = capMemory(bytes, 40);
    expect(readWasm(capped).memories[0]).toMatchObject({ maximumPages: 40 });
    expect(WebAssembly.validate(capped as Uint8Array<ArrayBuffer>)).toBe(true);
    expect(readWasm(capped).exports).toEqual(readWasm(bytes).exports);
  });

  it("keeps a lower maximum the module already declares", () => {
    const capped = capMemory(wat(`(module (memory (export "memory") 1 4))`), 40);
    expect(readWasm(capped).memories[0]).toMatchObject({ initialPages: 1, maximumPages: 4 });
  });

  it("refuses a module that starts above the limit", () => {
    expect(() => capMemory(wat(`(module (memory (export "memory") 50))`), 40)).toThrow(MemoryLimitError);
  });
});
