import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { readFileSync, rmSync } from "node:fs";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../apps/market-manager/src/db/embedded.ts";
import { freePort } from "../support/market.ts";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import {
  signUp,
  sleep,
  startManager,
  startWorker,
  stopGently,
  tempDir,
  waitFor,
  type ManagerProcess,
  type WorkerProcess,
} from "../support/processes.ts";

// PostgreSQL goes away under a running market and comes back (issue 4, "Crash recovery"). The
// server is this test's own, reached through DATABASE_URL, so it can be stopped and started
// while the Market Manager and its workers keep running. Calls during the outage may fail;
// nothing admitted may be lost.

const TASKS = 30;
const SAMPLES = 5_000_000;
const LEASE_TIMEOUT_MS = 3000;
const OUTAGE_MS = 5000; // longer than a lease lasts

const dataDir = tempDir("cyclemarket-faults-");
const pgDir = join(dataDir, "pg");
let pg: EmbeddedDatabase | undefined;
let manager: ManagerProcess | undefined;
const workers: WorkerProcess[] = [];

afterAll(async () => {
  for (const w of workers) await stopGently(w.child);
  await stopGently(manager?.child);
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("PostgreSQL restarts under a running market", () => {
  it("the market answers again, the job completes and the ledger balances", async () => {
    const pgPort = await freePort();
    pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort });
    // Its stamps fail for the whole outage, longer than half its takeover timeout: the manager does
    // not act on its memory until a stamp finds it still itself, then forgives the silence.
    manager = await startManager({ databaseUrl: pg.ownerUrl, dataDir, leaseTimeoutMs: LEASE_TIMEOUT_MS, env: { MARKET_MANAGER_TIMEOUT_MS: "4000" } });
    const consumer = await signUp(manager.url, "buyer@example.test", ["consumer"], manager.outbox);
    const token = readFileSync(manager.tokenFile, "utf8").trim();
    workers.push(await startWorker(manager.url, token, "w1"), await startWorker(manager.url, token, "w2"));

    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");
    const doneBefore = await waitFor(
      "the first results",
      async () => {
        const j = await consumer.jobs.get.query({ jobId });
        return j.tasksDone >= 4 ? j.tasksDone : undefined;
      },
      60_000,
      50,
    );
    expect(doneBefore).toBeLessThan(TASKS);

    await pg.stop();
    pg = undefined;
    const outageStarted = Date.now();
    // While the database is away the market cannot answer; it says so rather than hanging.
    await expect(consumer.jobs.get.query({ jobId })).rejects.toThrow();
    await sleep(OUTAGE_MS - (Date.now() - outageStarted));
    pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort });

    const job = await waitFor(
      "the job to complete after the outage",
      async () => {
        const j = await consumer.jobs.get.query({ jobId });
        expect(j.status).not.toBe("failed");
        return j.status === "completed" ? j : undefined;
      },
      120_000,
    );
    expect((job.result as { total: number }).total).toBe(SAMPLES * TASKS);
    expect(manager.child.exitCode).toBeNull();
    for (const w of workers) expect(w.child.exitCode, `${w.name} exited:\n${w.out.tail()}`).toBeNull();

    // A new job after the outage runs as usual: the market recovered, not just this one job.
    const after = await consumer.jobs.submit.mutate({
      name: "pi after",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1_000_000 }, taskCount: 4 },
      benefit: { kind: "constant", value: 50 },
    });
    expect(after.decision.outcome).toBe("admitted");
    await waitFor("the second job to complete", async () => ((await consumer.jobs.get.query({ jobId: after.jobId })).status === "completed" ? true : undefined), 60_000);

    await withDb(pg.ownerUrl, async (db) => {
      await expectMarketInvariants(db, [jobId, after.jobId]);
      // The market could not hear its machines while its database was away: none was departed for it.
      expect(await db.machine.findMany({ where: { departReason: "missed-heartbeats" }, select: { name: true } })).toEqual([]);
    });
  });
});
