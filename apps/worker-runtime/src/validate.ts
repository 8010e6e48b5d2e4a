// Upload-time checks of a job's module (docs/DESIGN.md: "At upload the Task Manager validates the
// module ... and rejects anything else with a clear error"). Reasons are data; the sentence
// for a person is rendered by describeModuleRefusal at the edge.
import { ALLOWED_WASI_IMPORTS, WASI_MODULE, isAllowedImport } from "./wasi-host.ts";
import { PAGE_BYTES, WasmFormatError, hasWasmHeader, readWasm, type WasmImport } from "./wasm-binary.ts";

export { ALLOWED_WASI_IMPORTS, WASI_MODULE };

export interface ModuleLimits {
  /** Largest module accepted, in bytes. */
  maxBytes: number;
  /** Largest memory a task may start with, in 64 KiB pages (the sandbox caps growth at run time). */
  maxMemoryPages: number;
}

export interface ModuleInfo {
  imports: WasmImport[];
  /** Always true for an accepted module: it exports `_start` taking and returning nothing. */
  exportsStart: true;
  memory: { initialPages: number; maximumPages: number | null };
  bytes: number;
}

export type ModuleRefusal =
  | { code: "too-large"; bytes: number; maxBytes: number }
  | { code: "not-wasm"; bytes: number }
  | { code: "invalid-wasm"; detail: string }
  | { code: "forbidden-import"; module: string; name: string; kind: WasmImport["kind"] }
  | { code: "no-start" }
  | { code: "bad-start-signature"; params: number; results: number }
  | { code: "no-memory" }
  | { code: "unsupported-memory"; feature: "shared" | "memory64" | "several" }
  | { code: "memory-too-large"; initialPages: number; maxMemoryPages: number };

export type ModuleValidation = { ok: true; info: ModuleInfo } | { ok: false; reason: ModuleRefusal };

function reject(reason: ModuleRefusal): ModuleValidation {
  return { ok: false, reason };
}

/** Synchronous and free of I/O: `WebAssembly.validate` checks the whole binary, the reader checks what the sandbox needs. */
export function validateModule(bytes: Uint8Array, limits: ModuleLimits): ModuleValidation {
  if (bytes.length > limits.maxBytes) return reject({ code: "too-large", bytes: bytes.length, maxBytes: limits.maxBytes });
  if (!hasWasmHeader(bytes)) return reject({ code: "not-wasm", bytes: bytes.length });
  if (!WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>)) return reject({ code: "invalid-wasm", detail: "the engine rejected the binary" });

  let summary;
  try {
    summary = readWasm(bytes);
  } catch (e) {
    return reject({ code: "invalid-wasm", detail: e instanceof WasmFormatError ? e.message : String(e) });
  }

  const forbidden = summary.imports.find((i) => i.kind !== "function" || !isAllowedImport(i.module, i.name));
  if (forbidden) return reject({ code: "forbidden-import", module: forbidden.module, name: forbidden.name, kind: forbidden.kind });

  const start = summary.exports.find((e) => e.name === "_start");
  if (!start || start.kind !== "function") return reject({ code: "no-start" });
  const signature = summary.functionSignature(start.index);
  if (signature && (signature.params !== 0 || signature.results !== 0)) {
    return reject({ code: "bad-start-signature", params: signature.params, results: signature.results });
  }

  const memoryExport = summary.exports.find((e) => e.name === "memory");
  if (!memoryExport || memoryExport.kind !== "memory" || summary.memories.length === 0) return reject({ code: "no-memory" });
  if (summary.memories.length > 1) return reject({ code: "unsupported-memory", feature: "several" });
  const memory = summary.memories[0]!;
  if (memory.shared) return reject({ code: "unsupported-memory", feature: "shared" });
  if (memory.memory64) return reject({ code: "unsupported-memory", feature: "memory64" });
  if (memory.initialPages > limits.maxMemoryPages) {
    return reject({ code: "memory-too-large", initialPages: memory.initialPages, maxMemoryPages: limits.maxMemoryPages });
  }

  return {
    ok: true,
    info: {
      imports: summary.imports,
      exportsStart: true,
      memory: { initialPages: memory.initialPages, maximumPages: memory.maximumPages },
      bytes: bytes.length,
    },
  };
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

const mib = (pages: number) => formatBytes(pages * PAGE_BYTES);

/** One English sentence for the upload form. */
export function describeModuleRefusal(reason: ModuleRefusal): string {
  switch (reason.code) {
    case "too-large":
      return `The module is ${formatBytes(reason.bytes)}, over the limit of ${formatBytes(reason.maxBytes)}.`;
    case "not-wasm":
      return "The file is not a WebAssembly module (it does not start with the WebAssembly header).";
    case "invalid-wasm":
      return `The file looks like WebAssembly but is not a valid module: ${reason.detail}.`;
    case "forbidden-import":
      return reason.module === WASI_MODULE
        ? `The module imports ${reason.module}.${reason.name}, which the sandbox does not provide (no network, no host access).`
        : `The module imports ${reason.kind} ${reason.module}.${reason.name}; only WASI preview 1 functions (${WASI_MODULE}) are allowed. Compile it as a WASI command.`;
    case "no-start":
      return "The module has no exported _start function; compile it as a WASI command, not a library.";
    case "bad-start-signature":
      return `The module's _start takes ${reason.params} and returns ${reason.results} values; it must take and return none.`;
    case "no-memory":
      return "The module does not export its memory as `memory`, which WASI needs to pass arguments and output.";
    case "unsupported-memory":
      return reason.feature === "shared"
        ? "The module uses shared memory (threads), which the sandbox does not support."
        : reason.feature === "memory64"
          ? "The module uses 64-bit memory, which the sandbox does not support."
          : "The module has more than one memory, which the sandbox does not support.";
    case "memory-too-large":
      return `The module starts with ${mib(reason.initialPages)} of memory, over the per-task limit of ${mib(reason.maxMemoryPages)}.`;
  }
}
