import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { killHard, signIn, signUp, startManager, startWorker, stopGently, tempDir, waitFor, type ManagerProcess, type WorkerProcess } from "../support/processes.ts";
import { startEmbeddedPostgres, APP_ROLE, type EmbeddedDatabase } from "../../apps/market-manager/src/db/embedded.ts";
import { applyMigrations } from "../../apps/market-manager/src/db/migrate.ts";
import { grantAppTables } from "../../apps/market-manager/src/db/sql/owner.ts";
import { freePort } from "../../apps/market-manager/src/net/free-port.ts";

// Three Market Managers on one PostgreSQL (issue 47, docs/SCALING.md "Several managers"), five
// Node workers registered through the first and spread by room, jobs submitted to each manager.
// The manager holding the most jobs is killed with SIGKILL mid-run: after the managers' timeout
// another takes over its machines and jobs, its workers find their new manager through the
// first one (worker.whereIs) and carry on, and every job completes with each result kept and
// paid once and the ledger at zero.

const JOBS_ON_VICTIM = 3;
const TASKS = 10;
const SAMPLES = 3_000_000;
const LEASE_TIMEOUT_MS = 4000;
// Long enough that a survivor whose stamps a loaded host delays is not taken over by the other.
const MANAGER_TIMEOUT_MS = 5000;

const dataDir = tempDir("cyclemarket-managers-");
let pg: EmbeddedDatabase | undefined;
const managers: ManagerProcess[] = [];
const workers: WorkerProcess[] = [];
const managerIds = new Map<ManagerProcess, string>();

afterAll(async () => {
  for (const w of workers) await stopGently(w.child);
  for (const m of managers) await stopGently(m.child);
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Which manager holds each machine and job, and each manager's row, as PostgreSQL has them. */
const holders = (url: string) =>
  withDb(url, async (db) => ({
    machines: await db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true, name: true } }),
    managers: await db.marketManager.findMany(),
  }));

describe("one of three Market Managers is killed with SIGKILL mid-run", () => {
  it("another takes over its machines and jobs, its workers follow, and nothing acknowledged is lost or paid twice", async () => {
    pg = await startEmbeddedPostgres({ dataDir: join(dataDir, "postgres"), port: await freePort() });
    await applyMigrations(pg.ownerUrl);
    await grantAppTables(pg.ownerUrl, APP_ROLE);
    // One after the other: the first makes the local worker's token the producers use here.
    for (const id of ["manager-1", "manager-2", "manager-3"]) {
      const m = await startManager({
        dataDir,
        databaseUrl: pg.url,
        leaseTimeoutMs: LEASE_TIMEOUT_MS,
        env: { MARKET_MANAGER_ID: id, MARKET_MIGRATE: "0", MARKET_MANAGER_TIMEOUT_MS: String(MANAGER_TIMEOUT_MS) },
      });
      managerIds.set(m, id);
      managers.push(m);
    }
    const [front] = managers as [ManagerProcess];
    const token = readFileSync(front.tokenFile, "utf8").trim();
    // Every worker knows only the first manager: registration sends each to the one with the most room.
    for (let i = 1; i <= 5; i++) {
      workers.push(await startWorker(front.url, token, `w${i}`));
      await new Promise((r) => setTimeout(r, 1200)); // a view of the managers' rooms between joins
    }
    const spread = await holders(pg.ownerUrl);
    const perManager = new Map<string, number>();
    for (const m of spread.machines) perManager.set(m.managerId!, (perManager.get(m.managerId!) ?? 0) + 1);
    expect(perManager.size, `machines by manager: ${JSON.stringify([...perManager])}`).toBe(3);

    // The victim: a manager other than the front door that holds machines; jobs go to every manager.
    const victim = managers.find((m) => m !== front && (perManager.get(idOf(m)) ?? 0) > 0)!;
    const clients = new Map<ManagerProcess, Awaited<ReturnType<typeof signUp>>>();
    clients.set(front, await signUp(front.url, "buyer@example.test", ["consumer"], front.outbox));
    for (const m of managers) if (!clients.has(m)) clients.set(m, await signIn(m.url, "buyer@example.test", "correct horse battery"));
    const jobIds: string[] = [];
    const jobsOf = new Map<string, string>();
    const submit = async (m: ManagerProcess, n: number) => {
      for (let i = 0; i < n; i++) {
        const { jobId, decision } = await clients.get(m)!.jobs.submit.mutate({
          name: `pi ${idOf(m)} ${i}`,
          source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
          benefit: { kind: "constant", value: 50 },
        });
        expect(decision.outcome).toBe("admitted");
        jobIds.push(jobId);
        jobsOf.set(jobId, idOf(m));
      }
    };
    for (const m of managers) await submit(m, m === victim ? JOBS_ON_VICTIM : 1);
    const consumer = clients.get(front)!;
    const victimJobs = jobIds.filter((id) => jobsOf.get(id) === idOf(victim));

    // Killed once some of its tasks are done, well before all of them are.
    const doneAtKill = await waitFor(
      "the victim's first results",
      async () => {
        const done = (await consumer.jobs.list.query()).filter((j) => victimJobs.includes(j.id)).reduce((s, j) => s + j.tasksDone, 0);
        return done >= 3 ? done : undefined;
      },
      60_000,
      50,
    );
    await killHard(victim.child);
    const killedAt = Date.now();
    expect(doneAtKill).toBeLessThan(JOBS_ON_VICTIM * TASKS);
    const victimMachines = new Set(spread.machines.filter((m) => m.managerId === idOf(victim)).map((m) => m.id));

    // A survivor takes it over once it has been silent for the timeout, and says so.
    const taker = await Promise.any(
      managers.filter((m) => m !== victim).map((m) => m.out.next(new RegExp(`took over the Market Manager ${idOf(victim)}`), 60_000).then(() => m)),
    );
    await waitFor(
      "every job to complete",
      async () => {
        const jobs = (await consumer.jobs.list.query()).filter((j) => jobIds.includes(j.id));
        expect(jobs.filter((j) => j.status === "failed" || j.status === "rejected")).toEqual([]);
        return jobs.every((j) => j.status === "completed") ? jobs : undefined;
      },
      180_000,
    );
    // The victim's jobs may have finished on the survivors' own machines before its workers came
    // back: once every machine of its is active under a survivor, each survivor runs one job more.
    await waitFor(
      "the victim's machines under the survivors",
      async () => {
        const rows = (await holders(pg!.ownerUrl)).machines.filter((m) => victimMachines.has(m.id));
        return rows.length === victimMachines.size && rows.every((m) => m.managerId !== idOf(victim)) ? true : undefined;
      },
      60_000,
    );
    for (const m of managers) if (m !== victim) await submit(m, 1);
    await waitFor(
      "the survivors' jobs to complete",
      async () => ((await consumer.jobs.list.query()).filter((j) => jobIds.includes(j.id)).every((j) => j.status === "completed") ? true : undefined),
      180_000,
    );
    for (const jobId of jobIds) {
      const job = await consumer.jobs.get.query({ jobId });
      // No result lost: the estimate is built from every task's samples.
      expect((job.result as { total: number }).total).toBe(SAMPLES * TASKS);
    }
    for (const w of workers) expect(w.child.exitCode, `${w.name} exited:\n${w.out.tail()}`).toBeNull();

    await withDb(pg.ownerUrl, async (db) => {
      // Each result kept and paid once, each job settled once, the ledger at zero.
      const { accepted } = await expectMarketInvariants(db, jobIds);
      // The victim's jobs finished under the taker, on machines of the victim's workers among others.
      const after = accepted.filter((r) => r.createdAt.getTime() > killedAt);
      expect(after.length).toBeGreaterThan(0);
      const victimJobRows = await db.job.findMany({ where: { id: { in: victimJobs } }, select: { managerId: true } });
      for (const j of victimJobRows) expect(j.managerId).toBe(idOf(taker));
      // Nothing is left with the dead manager, and its row says who took it over.
      expect(await db.machine.count({ where: { managerId: idOf(victim), status: "active" } })).toBe(0);
      const row = await db.marketManager.findUnique({ where: { id: idOf(victim) } });
      expect(row?.claimedBy).toBe(idOf(taker));
      // The victim's workers followed: a machine it held (the same machine, not a new registration)
      // reported results the taker accepted after the kill.
      expect(after.some((r) => victimMachines.has(r.machineId))).toBe(true);
    });
  });
});

function idOf(m: ManagerProcess): string {
  return managerIds.get(m)!;
}
