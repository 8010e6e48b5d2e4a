import { createHash } from "node:crypto";
import type { Market } from "../market/market.ts";
import type { LiveMachine, LiveState } from "../market/live.ts";
import { refuse } from "../api/errors.ts";
import { EXAMPLES, exampleModule, type ExampleName } from "./examples.ts";
import { probeModuleHash } from "../resources/probes.ts";

// Programs are private. A hash is shown to every producer that runs one of a job's tasks and
// stays valid after the job ends, so knowing it proves nothing: a job may name a module by hash
// only if its owner sent those bytes (PUT /api/modules, or a job that carried them), and a
// module's bytes go only to a machine that holds a live lease of a task running it. The shipped
// examples' modules are the market's own, usable by anyone.

/** The shipped examples' modules by hash, computed once. */
let shipped: ReadonlyMap<string, Uint8Array> | null = null;
const examples = () =>
  (shipped ??= new Map(
    (Object.keys(EXAMPLES) as ExampleName[]).map((name) => {
      const bytes = exampleModule(name);
      return [createHash("sha256").update(bytes).digest("hex"), bytes] as const;
    }),
  ));

/** The bytes of a shipped example's module, by its hash; null for any other hash. */
export const shippedModule = (hash: string): Uint8Array | null => examples().get(hash) ?? null;

// Rights this process has seen (market.resources.moduleRights): a right is never taken back, so a
// consumer who names the same module job after job asks PostgreSQL once.

/** Records that `userId` sent the bytes of the stored module `hash` (stored first: the right names it). */
export async function grantModuleRight(market: Market, hash: string, userId: string): Promise<void> {
  const { db } = market;
  const rights = market.resources.moduleRights;
  if (rights.has(`${hash} ${userId}`)) return;
  // One statement (ON CONFLICT DO NOTHING): the same bytes sent twice at once both succeed.
  await db.moduleUpload.createMany({ data: { hash, userId }, skipDuplicates: true });
  rights.set(`${hash} ${userId}`, true);
}

/** Whether `userId` may name the module `hash` in a job: they sent its bytes, or it is a shipped example's. */
export async function mayUseModule(market: Market, hash: string, userId: string): Promise<boolean> {
  if (examples().has(hash)) return true;
  const { db } = market;
  const rights = market.resources.moduleRights;
  if (rights.has(`${hash} ${userId}`)) return true;
  const row = await db.moduleUpload.findUnique({ where: { hash_userId: { hash, userId } }, select: { hash: true } });
  if (row) rights.set(`${hash} ${userId}`, true);
  return row !== null;
}

/**
 * A job names a module by hash: its owner must have sent those bytes. A module someone else sent is
 * refused in the same words as one never sent, so the answer does not tell whether it exists.
 */
export async function requireModuleRight(market: Market, hash: string, userId: string): Promise<void> {
  if (!(await mayUseModule(market, hash, userId))) {
    throw refuse.badRequest({ code: "module-unknown", hash }, `You have not uploaded a module with hash ${hash}; upload its bytes first (PUT /api/modules).`);
  }
}

/**
 * Whether a machine of `ownerId` (the one named, when the worker names it) holds a live lease of a
 * task whose job runs the module `hash`: only then are the module's bytes sent (`worker.module`).
 * Without a machine named, the owner's machines are found by a walk over the machines in memory.
 */
export function leasesModule(state: LiveState, ownerId: string, hash: string, now: number, machineId?: string): boolean {
  if (machineId !== undefined) {
    const machine = state.machines.get(machineId);
    return machine !== undefined && machine.ownerId === ownerId && runsModule(state, machine, hash, now);
  }
  for (const machine of state.machines.values()) if (machine.ownerId === ownerId && runsModule(state, machine, hash, now)) return true;
  return false;
}

function runsModule(state: LiveState, machine: LiveMachine, hash: string, now: number): boolean {
  // The market's own probe module goes to a machine that has a probe to answer (resources/probes.ts).
  if (machine.probe && machine.probe.dueAt >= now && hash === probeModuleHash()) return true;
  for (const leaseId of machine.leases) {
    const lease = state.leases.get(leaseId);
    if (!lease || lease.expiresAt < now) continue;
    const task = state.tasks.get(lease.taskId);
    if (task && state.jobs.get(task.jobId)?.moduleHash === hash) return true;
  }
  return false;
}
