import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { sharedDatabase } from "../support/postgres.ts";
import {
  killHard,
  signIn,
  signUp,
  startManager,
  startWorker,
  stopGently,
  tempDir,
  waitFor,
  type ManagerProcess,
  type WorkerProcess,
} from "../support/processes.ts";

// kill -9 of a Node worker while it runs a task (issue 4, "Crash recovery"): nobody tells the
// market; it must notice the silence, take the lease back and have the task run elsewhere.

const TASKS = 16;
const SAMPLES = 20_000_000; // a few hundred milliseconds a task, so the kill lands mid-task
const LEASE_TIMEOUT_MS = 3000;

const dataDir = tempDir("cyclemarket-faults-");
// Only the workers die here: the market's database is a clone on the run's shared PostgreSQL.
const database = await sharedDatabase();
let manager: ManagerProcess | undefined;
const workers: WorkerProcess[] = [];

afterAll(async () => {
  for (const w of workers) await stopGently(w.child);
  await stopGently(manager?.child);
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a Node worker is killed with SIGKILL mid-task", () => {
  it("the market notices it departed, runs its task elsewhere, and never accepts its work after its death", async () => {
    manager = await startManager({ dataDir, databaseUrl: database.url, leaseTimeoutMs: LEASE_TIMEOUT_MS });
    const admin = await signIn(manager.url, manager.admin!.email, manager.admin!.password);
    const consumer = await signUp(manager.url, "buyer@example.test", ["consumer"], manager.outbox);
    const token = readFileSync(manager.tokenFile, "utf8").trim();
    const survivor = await startWorker(manager.url, token, "w2");
    workers.push(survivor);
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");
    // The second worker joins a busy market: its first lease comes at once, from the queue. It asks
    // a twentieth of the first's price, so it takes the first's queued work whatever their
    // benchmarks say: on a loaded machine one benchmark can come out several times the other.
    const victim = await startWorker(manager.url, token, "w1", 0.05);
    workers.push(victim);
    const victimMachine = victim.machineIds()[0]!;
    await victim.out.next(/leased 1 task/, 30_000, true);
    await killHard(victim.child);
    const killedAt = Date.now();

    // The admin sees the machine depart once it has been silent for the lease timeout.
    const departed = await waitFor(
      "the killed worker's machine to depart",
      async () => {
        const m = (await admin.admin.overview.query()).machines.find((x) => x.id === victimMachine);
        return m?.status === "departed" ? m : undefined;
      },
      LEASE_TIMEOUT_MS + 10_000,
    );
    expect(departed.departedAt!).toBeGreaterThan(killedAt);

    const job = await waitFor(
      "the job to complete",
      async () => {
        const j = await consumer.jobs.get.query({ jobId });
        expect(j.status).not.toBe("failed");
        return j.status === "completed" ? j : undefined;
      },
      120_000,
    );
    expect((job.result as { total: number }).total).toBe(SAMPLES * TASKS);
    expect(survivor.child.exitCode).toBeNull();

    await withDb(database.url, async (db) => {
      const { accepted } = await expectMarketInvariants(db, [jobId]);
      const machine = await db.machine.findUniqueOrThrow({ where: { id: victimMachine } });
      expect(machine).toMatchObject({ status: "departed", departReason: "missed-heartbeats" });
      // It died holding a lease: that lease was taken back, and its task was done by the survivor.
      const lost = await db.lease.findMany({ where: { machineId: victimMachine, issuedAt: { lt: new Date(killedAt) }, status: { in: ["expired", "abandoned"] } } });
      expect(lost.length).toBeGreaterThan(0);
      for (const lease of lost) {
        const result = accepted.find((r) => r.taskId === lease.taskId)!;
        expect(result.machineId).toBe(survivor.machineIds()[0]);
        expect(result.createdAt.getTime()).toBeGreaterThan(killedAt);
      }
      expect(await db.lease.count({ where: { machineId: victimMachine, status: "active" } })).toBe(0);
      // Nothing from the dead worker was accepted (or even recorded) after its death.
      expect(await db.result.count({ where: { lease: { machineId: victimMachine }, createdAt: { gte: new Date(killedAt) } } })).toBe(0);
    });
  });
});
