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
  it("accepts a module again by its hash, with the same description", () => {
    const bytes = paddedModule(4096);
    const first = checkModule(bytes, 8192);
    const again = checkModule(new Uint8Array(bytes), 8192);
    expect(again.hash).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(again).toEqual(first);
    expect(again.info.bytes).toBe(4096);
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
