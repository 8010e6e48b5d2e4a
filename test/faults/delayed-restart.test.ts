import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { clientFor } from "../support/market.ts";
import { sharedDatabase } from "../support/postgres.ts";
import { signUp, startManager, stopGently, tempDir, waitFor, type ManagerProcess } from "../support/processes.ts";

// A delayed job belongs to the engine, which asks it again when capacity arrives (Engine.tick).
// The engine's state lives in memory only: a restarted Market Manager must hand it the delayed
// jobs it rebuilds from PostgreSQL, or they would wait unasked until the engine gives up on them.

const LEASE_TIMEOUT_MS = 30_000;
const dataDir = tempDir("cyclemarket-delayed-");
// The restart is the Market Manager's: its database is a clone on the run's shared PostgreSQL.
const database = await sharedDatabase();
let manager: ManagerProcess | undefined;

afterAll(async () => {
  await stopGently(manager?.child);
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a job delayed before the Market Manager restarts", () => {
  it("is still delayed after the restart and is admitted once a machine arrives", async () => {
    manager = await startManager({ dataDir, databaseUrl: database.url, leaseTimeoutMs: LEASE_TIMEOUT_MS });
    const options = { port: manager.port, dataDir, databaseUrl: database.url, leaseTimeoutMs: LEASE_TIMEOUT_MS };
    const consumer = await signUp(manager.url, "buyer@example.test", ["consumer"], manager.outbox);
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "waits",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 100_000 }, taskCount: 2 },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("delayed");

    await stopGently(manager.child);
    manager = await startManager(options);
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("delayed");

    const worker = clientFor(manager.url, { authorization: `Bearer ${readFileSync(manager.tokenFile, "utf8").trim()}` });
    await worker.worker.register.mutate({ name: "m", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
    const admitted = await waitFor("the delayed job's admission", async () => {
      const job = await consumer.jobs.get.query({ jobId });
      return job.status === "admitted" ? job : undefined;
    }, 20_000);
    expect(admitted.escrowHeld).toBeGreaterThan(0);
  }, 180_000);
});
