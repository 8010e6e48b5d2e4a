import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import {
  embeddedUrl,
  killHard,
  signUp,
  startManager,
  startWorker,
  stopGently,
  stopLeftoverPostgres,
  tempDir,
  waitFor,
  type ManagerProcess,
  type WorkerProcess,
} from "../support/processes.ts";

// kill -9 of the Market Manager in the middle of a run (issue 4, "Crash recovery"): the manager
// and its embedded PostgreSQL are real processes, so are the two Node workers. The manager is
// restarted on the same data folder and port; the workers were never told anything and carry on.

const JOBS = 4;
const TASKS = 10;
const SAMPLES = 3_000_000;
const LEASE_TIMEOUT_MS = 3000;

const dataDir = tempDir("cyclemarket-faults-");
let manager: ManagerProcess | undefined;
const workers: WorkerProcess[] = [];

afterAll(async () => {
  for (const w of workers) await stopGently(w.child);
  await stopGently(manager?.child);
  await stopLeftoverPostgres(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the Market Manager is killed with SIGKILL mid-run", () => {
  it("restarts on the same data, and every admitted job completes with each result kept and paid once", async () => {
    manager = await startManager({ dataDir, leaseTimeoutMs: LEASE_TIMEOUT_MS });
    // The restart keeps the API's address, which the workers know; its PostgreSQL may move.
    const options = { port: manager.port, dataDir, leaseTimeoutMs: LEASE_TIMEOUT_MS };
    const consumer = await signUp(manager.url, "buyer@example.test", ["consumer"], manager.outbox);
    const token = readFileSync(manager.tokenFile, "utf8").trim();
    workers.push(await startWorker(manager.url, token, "w1"), await startWorker(manager.url, token, "w2"));

    const jobIds: string[] = [];
    const prices = new Map<string, number>();
    for (let i = 0; i < JOBS; i++) {
      const { jobId, decision } = await consumer.jobs.submit.mutate({
        name: `pi ${i}`,
        source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
        benefit: { kind: "constant", value: 50 },
      });
      expect(decision.outcome).toBe("admitted");
      if (decision.outcome === "admitted") prices.set(jobId, decision.price);
      jobIds.push(jobId);
    }

    // Kill it once some tasks are done, well before all of them are.
    const doneAtKill = await waitFor(
      "the first results",
      async () => {
        const done = (await consumer.jobs.list.query()).reduce((s, j) => s + j.tasksDone, 0);
        return done >= 6 ? done : undefined;
      },
      60_000,
      50,
    );
    await killHard(manager.child);
    const killedAt = Date.now();
    expect(doneAtKill).toBeLessThan(JOBS * TASKS);

    // The market is away for longer than a lease lasts; the workers keep running meanwhile.
    await new Promise((r) => setTimeout(r, LEASE_TIMEOUT_MS));
    for (const w of workers) expect(w.child.exitCode, `${w.name} exited during the outage:\n${w.out.tail()}`).toBeNull();

    manager = await startManager(options);
    const restartedAt = Date.now();
    // Its PostgreSQL outlived it, holding the data folder; the new start shut that server down.
    expect(manager.out.lines.join("\n")).toMatch(/stopping PostgreSQL \(pid \d+\) left running/);
    // The consumer's session survives the restart; every job completes.
    await waitFor(
      "every job to complete",
      async () => {
        const jobs = await consumer.jobs.list.query();
        const open = jobs.filter((j) => j.status !== "completed");
        expect(open.filter((j) => j.status === "failed" || j.status === "rejected")).toEqual([]);
        return open.length === 0 ? jobs : undefined;
      },
      120_000,
    );
    let charged = 0;
    for (const jobId of jobIds) {
      const job = await consumer.jobs.get.query({ jobId });
      const result = job.result as { total: number; pi: number };
      // No result lost: the estimate is built from every task's samples.
      expect(result.total).toBe(SAMPLES * TASKS);
      expect(Math.abs(result.pi - Math.PI)).toBeLessThan(0.01);
      // The posted price, or the producer time its runs were paid for if that came to more; never the bid.
      expect(job.charged).toBeGreaterThanOrEqual(prices.get(jobId)! - 1e-6);
      expect(job.charged).toBeLessThan(50);
      charged += job.charged!;
    }
    // Charged once per job, whatever happened in between.
    expect((await consumer.ledger.statement.query()).consumerBalance).toBeCloseTo(1000 - charged, 5);

    // The workers survived the outage and did work for the restarted market.
    for (const w of workers) expect(w.child.exitCode, `${w.name} exited:\n${w.out.tail()}`).toBeNull();
    const { accepted } = await withDb(embeddedUrl(join(dataDir, "postgres")), (db) => expectMarketInvariants(db, jobIds));
    const before = accepted.filter((r) => r.createdAt.getTime() < killedAt);
    const after = accepted.filter((r) => r.createdAt.getTime() >= restartedAt);
    expect(before.length).toBeGreaterThanOrEqual(doneAtKill);
    expect(before.length).toBeLessThan(JOBS * TASKS); // the kill did land mid-run
    expect(after.length).toBeGreaterThan(0);
    const workerMachines = new Set(workers.flatMap((w) => w.machineIds()));
    for (const r of after) expect(workerMachines.has(r.machineId)).toBe(true);
  });
});
