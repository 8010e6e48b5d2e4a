import { afterAll, expect } from "vitest";
import { rmSync } from "node:fs";
import { sharedDatabase } from "./postgres.ts";
import { startManager, stopGently, tempDir, waitFor, type ManagerProcess, type WorkerProcess } from "./processes.ts";

/**
 * Market Managers in processes of their own on one database cloned from the shared server, each
 * started by `start(id, env)` with a 10 s lease and manager timeout and 5 s for other managers'
 * quotes (a loaded test machine answers slower than a market's 1.5 s allows); the workers and managers a
 * test pushes are stopped (a paused manager resumed first), and the database dropped, after the file.
 */
export async function managersOnOneDatabase(prefix: string, env: Record<string, string> = {}) {
  const database = await sharedDatabase();
  const dataDir = tempDir(prefix);
  const managers: ManagerProcess[] = [];
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await stopGently(w.child);
    for (const m of managers) {
      m.child.kill("SIGCONT");
      await stopGently(m.child);
    }
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const start = async (id: string) => {
    const m = await startManager({ dataDir, databaseUrl: database.url, leaseTimeoutMs: 10_000, env: { MARKET_MANAGER_ID: id, MARKET_MANAGER_TIMEOUT_MS: "10000", MARKET_QUOTE_SHOP_TIMEOUT_MS: "5000", ...env } });
    managers.push(m);
    return m;
  };
  return { database, managers, workers, start };
}

/** Waits until a consumer's job completes (failing at once if it fails), as the consumer's own list shows it. */
export function jobCompleted(consumer: { jobs: { list: { query: () => Promise<{ id: string; status: string }[]> } } }, jobId: string, what: string, timeoutMs = 90_000) {
  return waitFor(
    what,
    async () => {
      const j = (await consumer.jobs.list.query()).find((x) => x.id === jobId);
      expect(j?.status).not.toBe("failed");
      return j?.status === "completed" ? j : undefined;
    },
    timeoutMs,
  );
}

/**
 * worker.register over HTTP as the Node worker sends it: through `url`, following a
 * `register-elsewhere` answer once. The machine, and the manager that registered it.
 */
export async function registerFollowing(url: string, token: string, name: string, offerKey?: string): Promise<{ machineId: string; managerId: string }> {
  const body = { name, ...(offerKey === undefined ? {} : { offerKey }), kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 256, bandwidthBytesPerSecond: 1e7, pricePerSecond: 1, userAgent: "test", follow: true };
  const call = async (at: string, input: Record<string, unknown>) => {
    const res = await fetch(`${at}/api/trpc/worker.register`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(input) });
    return (await res.json()) as { result?: { data: { machineId: string; managerId?: string } }; error?: { data?: { reason?: { code: string; managerId?: string; managerUrl?: string } } } };
  };
  let answer = await call(url, body);
  const elsewhere = answer.error?.data?.reason;
  if (elsewhere?.code === "register-elsewhere") answer = await call(elsewhere.managerUrl!, { ...body, manager: elsewhere.managerId });
  expect(answer.error).toBeUndefined();
  return { machineId: answer.result!.data.machineId, managerId: answer.result!.data.managerId! };
}
