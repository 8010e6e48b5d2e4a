import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { killHard, signIn, signUp, startManager, startWorker, stopGently, tempDir, waitFor, type ManagerProcess, type WorkerProcess } from "../support/processes.ts";
import { startEmbeddedPostgres, APP_ROLE, type EmbeddedDatabase } from "../../apps/market-manager/src/db/embedded.ts";
import { applyMigrations } from "../../apps/market-manager/src/db/migrate.ts";
import { grantAppTables } from "../../apps/market-manager/src/db/sql/owner.ts";
import { freePort } from "../../apps/market-manager/src/net/free-port.ts";

// A Market Manager killed and started again takes back a share of the machines (issue 47, item 4;
// docs/SCALING.md "Several managers"). Two managers on one PostgreSQL, four Node workers spread
// between them. manager-2 is killed with SIGKILL; manager-1 takes over its machines. manager-2
// starts again under its name, empty: manager-1, now above the fair share, hands it idle machines
// at its next stamp, and their workers follow (the same machines, not new registrations). A job
// submitted to manager-2 then runs on them, and the books hold.

const WORKERS = 4;
const TASKS = 8;
const SAMPLES = 1_000_000;
const LEASE_TIMEOUT_MS = 4000;
const MANAGER_TIMEOUT_MS = 3000;

const dataDir = tempDir("cyclemarket-rejoin-");
let pg: EmbeddedDatabase | undefined;
const managers: ManagerProcess[] = [];
const workers: WorkerProcess[] = [];

afterAll(async () => {
  for (const w of workers) await stopGently(w.child);
  for (const m of managers) await stopGently(m.child);
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Each active machine's manager, as PostgreSQL has it. */
const machinesByManager = (url: string) =>
  withDb(url, async (db) => {
    const rows = await db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true } });
    const by = new Map<string, string[]>();
    for (const r of rows) by.set(r.managerId ?? "", [...(by.get(r.managerId ?? "") ?? []), r.id]);
    return { rows, by };
  });

const start = (id: string) =>
  startManager({
    dataDir,
    databaseUrl: pg!.url,
    leaseTimeoutMs: LEASE_TIMEOUT_MS,
    env: { MARKET_MANAGER_ID: id, MARKET_MIGRATE: "0", MARKET_MANAGER_TIMEOUT_MS: String(MANAGER_TIMEOUT_MS) },
  });

describe("a killed Market Manager started again", () => {
  it("takes back a share of the machines, their workers follow, and its jobs run on them", async () => {
    pg = await startEmbeddedPostgres({ dataDir: join(dataDir, "postgres"), port: await freePort() });
    await applyMigrations(pg.ownerUrl);
    await grantAppTables(pg.ownerUrl, APP_ROLE);
    const first = await start("manager-1");
    managers.push(first);
    let second = await start("manager-2");
    managers.push(second);
    const token = readFileSync(first.tokenFile, "utf8").trim();
    for (let i = 1; i <= WORKERS; i++) {
      workers.push(await startWorker(first.url, token, `w${i}`));
      await new Promise((r) => setTimeout(r, 1200)); // a view of the managers' rooms between joins
    }
    const registered = new Set(workers.flatMap((w) => w.machineIds()));
    expect(registered.size).toBe(WORKERS);
    const before = await machinesByManager(pg.ownerUrl);
    expect(before.by.get("manager-2")?.length ?? 0, `machines by manager: ${JSON.stringify([...before.by])}`).toBeGreaterThan(0);

    // Killed; manager-1 takes over everything it held.
    await killHard(second.child);
    await first.out.next(/took over the Market Manager manager-2/, 60_000);
    const afterKill = await machinesByManager(pg.ownerUrl);
    expect(afterKill.by.get("manager-1")?.length).toBe(WORKERS);

    // Started again: it holds nothing of its own, and manager-1 hands it idle machines.
    second = await start("manager-2");
    managers.push(second);
    const handed = await waitFor(
      "manager-1 to hand machines back",
      async () => {
        const now = await machinesByManager(pg!.ownerUrl);
        const own = now.by.get("manager-2") ?? [];
        return own.length >= WORKERS / 2 ? { now, own } : undefined;
      },
      60_000,
    );
    // A fair share each, and never the same machine twice.
    expect(handed.own.length).toBe(WORKERS / 2);
    expect(handed.now.by.get("manager-1")?.length).toBe(WORKERS / 2);
    await first.out.next(/handed \d+ idle machine\(s\) to the Market Manager manager-2/, 10_000, true);
    await second.out.next(/took \d+ machine\(s\) handed by another Market Manager/, 10_000, true);

    // A job submitted to the restarted manager runs on the machines it took back: their workers
    // followed it, with the machines they had (no worker registered again).
    const buyer = await signUp(first.url, "buyer@example.test", ["consumer"], first.outbox);
    const atSecond = await signIn(second.url, "buyer@example.test", "correct horse battery");
    const { jobId, decision } = await atSecond.jobs.submit.mutate({
      name: "pi after the rejoin",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");
    await waitFor(
      "the job to complete",
      async () => {
        const job = (await buyer.jobs.list.query()).find((j) => j.id === jobId);
        expect(job?.status).not.toBe("failed");
        return job?.status === "completed" ? job : undefined;
      },
      120_000,
    );
    const job = await buyer.jobs.get.query({ jobId });
    expect((job.result as { total: number }).total).toBe(SAMPLES * TASKS);
    for (const w of workers) {
      expect(w.child.exitCode, `${w.name} exited:\n${w.out.tail()}`).toBeNull();
      expect(w.machineIds(), `${w.name} registered again`).toHaveLength(1);
    }

    await withDb(pg.ownerUrl, async (db) => {
      const { accepted } = await expectMarketInvariants(db, [jobId]);
      const own = new Set(handed.own);
      // manager-2 places its jobs on its own machines only: every result came from one it took back.
      expect(accepted.every((r) => own.has(r.machineId))).toBe(true);
      expect((await db.job.findUnique({ where: { id: jobId } }))?.managerId).toBe("manager-2");
      // No machine was registered anew; none left the market.
      expect(await db.machine.count()).toBe(WORKERS);
      expect(await db.machine.count({ where: { status: "active" } })).toBe(WORKERS);
    });
  });
});
