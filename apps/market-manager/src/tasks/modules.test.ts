import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { moduleImporting, paddedModule } from "../../../../test/support/wasm.ts";
import { checkModule } from "./modules.ts";

const reasonOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { reason?: { code: string } }).reason;
  }
  throw new Error("the module was accepted");
};

describe("the module check", () => {
  it("knows a module again by its hash, and another module as itself", () => {
    // Two modules of the same size, told apart by their bytes.
    const closes = moduleImporting("wasi_snapshot_preview1", "fd_close");
    const writes = moduleImporting("wasi_snapshot_preview1", "fd_write");
    expect(writes.length).toBe(closes.length);
    const first = checkModule(closes, 8192);
    expect(checkModule(new Uint8Array(closes), 8192)).toEqual(first);
    const other = checkModule(writes, 8192);
    expect(other.hash).toBe(createHash("sha256").update(writes).digest("hex"));
    expect(other.hash).not.toBe(first.hash);
    expect(other.info.imports.map((i) => i.name)).toEqual(["fd_write"]);
  });

  it("refuses a module accepted before once it is over the size limit of this call", () => {
    const bytes = paddedModule(4096);
    checkModule(bytes, 8192);
    expect(reasonOf(() => checkModule(bytes, 4095))).toMatchObject({ code: "module-too-large", bytes: 4096, maxBytes: 4095 });
  });

  it("refuses a bad module every time, not only the first", () => {
    const bytes = moduleImporting("env", "open_socket");
    expect(reasonOf(() => checkModule(bytes, 8192))).toMatchObject({ code: "module-forbidden-import", module: "env", name: "open_socket" });
    expect(reasonOf(() => checkModule(bytes, 8192))).toMatchObject({ code: "module-forbidden-import" });
  });
});
