// Vitest's global setup for the projects whose markets share one PostgreSQL (postgres.ts). Each
// project runs its own global setup, all in the run's main process: the first starts the server
// (in a process of its own, postgres-server.ts), the others reuse it, and the last teardown stops it.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import type { SharedPostgres } from "./postgres.ts";

type Holder = { users: number; server: Promise<{ child: ChildProcess; shared: SharedPostgres }> };
const KEY = Symbol.for("cyclemarket.test.sharedPostgres");
const registry = globalThis as unknown as Record<symbol, Holder | undefined>;
const root = resolve(import.meta.dirname, "../..");

export default async function setup(project: TestProject) {
  const holder = (registry[KEY] ??= { users: 0, server: startServer() });
  holder.users++;
  project.provide("sharedPostgres", (await holder.server).shared);
  return async () => {
    if (--holder.users > 0) return;
    registry[KEY] = undefined;
    const { child } = await holder.server;
    const exited = new Promise((r) => child.once("exit", r));
    child.stdin?.end();
    await exited;
  };
}

function startServer(): Holder["server"] {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "test/support/postgres-server.ts")], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  return new Promise((resolvePromise, reject) => {
    let out = "";
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.indexOf("\n");
      if (line >= 0) resolvePromise({ child, shared: JSON.parse(out.slice(0, line)) as SharedPostgres });
    });
    child.once("exit", (code) => reject(new Error(`the tests' shared PostgreSQL did not start (exit ${code}):\n${err.trim()}`)));
  });
}
