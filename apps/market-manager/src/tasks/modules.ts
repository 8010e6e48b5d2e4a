import { ModuleReason } from "@cyclemarket/costbenefit";
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { validateModule, describeModuleRefusal, type ModuleInfo, type ModuleRefusal } from "@cyclemarket/worker-runtime";
import { refuse } from "../api/errors.ts";

export const MAX_MEMORY_PAGES = 1024; // 64 MiB of linear memory per task

/**
 * The Task Manager's check at upload: the bytes must be a WASI command module that imports
 * nothing but the WASI calls the sandbox serves, within the size and memory limits.
 * Anything else is refused with its reason, before anything is stored.
 *
 * A module this process accepted before is known by its hash: submitting the same program again (a
 * consumer's next run, a job file run again) costs the hash, not the whole check again, which is
 * several times the hash's cost and all of it on the market's thread. Of the limits a verdict
 * depends on, the size is checked at each call and the memory limit is a constant, so a hash
 * accepted once stays accepted.
 */
export function checkModule(bytes: Uint8Array, maxBytes: number): { hash: string; info: ModuleInfo } {
  const hash = createHash("sha256").update(bytes).digest("hex");
  const known = bytes.length <= maxBytes ? accepted.get(hash) : undefined;
  if (known) return { hash, info: known };
  const info = verdictOf(bytes, maxBytes);
  accepted.set(hash, info);
  return { hash, info };
}

/** Modules accepted, by hash, the MAX_ACCEPTED used last; one forgotten only costs its check again. */
const MAX_ACCEPTED = 1_000;
const accepted = new LRUCache<string, ModuleInfo>({ max: MAX_ACCEPTED });

/** The module's description, or its refusal thrown with the reason. */
function verdictOf(bytes: Uint8Array, maxBytes: number): ModuleInfo {
  const verdict = validateModule(bytes, { maxBytes, maxMemoryPages: MAX_MEMORY_PAGES });
  if (!verdict.ok) {
    const code = verdict.reason.code === "too-large" ? "tooLarge" : "badRequest";
    const reason = ModuleReason.parse({ ...verdict.reason, code: `module-${verdict.reason.code}` });
    throw refuse[code](reason, describeModuleRefusal(verdict.reason));
  }
  return verdict.info;
}

/** The sandbox's refusals under the market's codes (`module-` before each). */
type AsModuleReason = ModuleRefusal extends infer R ? (R extends { code: infer C extends string } ? Omit<R, "code"> & { code: `module-${C}` } : never) : never;
// The sandbox's refusals and the vocabulary's module reasons have the same codes and fields: a
// field renamed on one side and not the other fails here, before the parse above could.
// (`module-unknown` is the market's own: it names a hash nobody uploaded.)
type SandboxModuleReason = Exclude<ModuleReason, { code: "module-unknown" }>;
const sameFields: [AsModuleReason] extends [SandboxModuleReason] ? ([SandboxModuleReason] extends [AsModuleReason] ? true : false) : false = true;
void sameFields;
