// Vitest's global setup for the projects whose markets share one PostgreSQL (postgres.ts). Each
// project runs its own global setup, all in the run's main process: the first starts the server,
// the others reuse it, and the last teardown stops it.
import type { TestProject } from "vitest/node";
import { startSharedPostgres } from "./postgres.ts";

type Holder = { users: number; server: ReturnType<typeof startSharedPostgres> };
const KEY = Symbol.for("cyclemarket.test.sharedPostgres");
const registry = globalThis as unknown as Record<symbol, Holder | undefined>;

export default async function setup(project: TestProject) {
  const holder = (registry[KEY] ??= { users: 0, server: startSharedPostgres() });
  holder.users++;
  project.provide("sharedPostgres", (await holder.server).shared);
  return async () => {
    if (--holder.users > 0) return;
    registry[KEY] = undefined;
    await (await holder.server).stop();
  };
}
