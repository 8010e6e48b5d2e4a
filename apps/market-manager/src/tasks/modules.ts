import type { ModuleReason } from "@cyclemarket/costbenefit";
import { createHash } from "node:crypto";
import { validateModule, describeModuleRefusal } from "@cyclemarket/worker-runtime";
import { refuse } from "../api/errors.ts";

export const MAX_MEMORY_PAGES = 1024; // 64 MiB of linear memory per task

/**
 * The Task Manager's check at upload: the bytes must be a WASI command module that imports
 * nothing but the WASI calls the sandbox serves, within the size and memory limits.
 * Anything else is refused with its reason, before anything is stored.
 */
export function checkModule(bytes: Uint8Array, maxBytes: number) {
  const verdict = validateModule(bytes, { maxBytes, maxMemoryPages: MAX_MEMORY_PAGES });
  if (!verdict.ok) {
    const code = verdict.reason.code === "too-large" ? "tooLarge" : "badRequest";
    const reason = { ...verdict.reason, code: `module-${verdict.reason.code}` } as ModuleReason;
    throw refuse[code](reason, describeModuleRefusal(verdict.reason));
  }
  return { hash: createHash("sha256").update(bytes).digest("hex"), info: verdict.info };
}
