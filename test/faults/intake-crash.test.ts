import { afterAll, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { withDb } from "../support/books.ts";
import { embeddedUrl, killHard, signUp, startManager, stopGently, stopLeftoverPostgres, tempDir, waitFor, type ManagerProcess } from "../support/processes.ts";
import { moduleImporting } from "../support/wasm.ts";
import { mutation } from "../security/http.ts";

// kill -9 of the Market Manager while an intake thread is writing a 10,000-task job's tasks
// (tasks/intake-thread.ts): the consumer got no answer, so after the restart the job is nowhere
// (not listed, no row, no task) and nothing was charged; the same job submitted again is taken
// whole, every task stored before the answer.

const TASKS = 10_000;
const dataDir = tempDir("cyclemarket-intake-crash-");
let manager: ManagerProcess | undefined;

afterAll(async () => {
  await stopGently(manager?.child);
  await stopLeftoverPostgres(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the Market Manager is killed with SIGKILL while a big job's tasks are being stored", () => {
  it("leaves no half job visible or charged, and takes the job whole when it comes again", async () => {
    manager = await startManager({ dataDir, leaseTimeoutMs: 30_000 });
    const consumer = await signUp(manager.url, "bulk@example.test", ["consumer"], manager.outbox);
    const { token } = await consumer.account.tokens.create.mutate({ name: "bulk", scopes: ["consume"] });
    const auth = { authorization: `Bearer ${token}` };
    const upload = await fetch(`${manager.url}/api/modules`, { method: "PUT", headers: auth, body: new Uint8Array(moduleImporting("wasi_snapshot_preview1", "proc_exit")) });
    const { hash } = (await upload.json()) as { hash: string };
    const stdin = Buffer.alloc(1024, 3).toString("base64");
    const job = { name: "bulk", source: { kind: "module", moduleHash: hash, workPerTask: 0.01, tasks: Array.from({ length: TASKS }, () => ({ stdin })) }, benefit: { kind: "constant", value: 20 } };
    const balanceBefore = (await consumer.ledger.statement.query()).consumerBalance;
    let url = embeddedUrl(join(dataDir, "postgres"));

    const answer = mutation(manager.url, "jobs.submit", job, auth).catch((e: unknown) => e);
    // The kill lands once some of the job's tasks are in the database and before all are.
    const storedAtKill = await withDb(url, (db) =>
      waitFor("the first stored tasks", async () => {
        const n = await db.task.count();
        return n > 0 ? n : undefined;
      }, 30_000, 5),
    );
    await killHard(manager.child);
    expect(storedAtKill).toBeLessThan(TASKS);
    expect(await answer).toBeInstanceOf(Error); // no answer: the connection died with the market

    manager = await startManager({ dataDir, port: manager.port, leaseTimeoutMs: 30_000 });
    // The restarted manager's PostgreSQL may listen on another port.
    url = embeddedUrl(join(dataDir, "postgres"));
    expect(await consumer.jobs.list.query()).toEqual([]);
    await withDb(url, async (db) => {
      expect(await db.job.count()).toBe(0);
      expect(await db.task.count()).toBe(0);
    });
    expect((await consumer.ledger.statement.query()).consumerBalance).toBe(balanceBefore);

    const again = await mutation(manager.url, "jobs.submit", job, auth);
    expect(again.status, again.text.slice(0, 300)).toBe(200);
    const jobId = again.json.result.data.jobId as string;
    await withDb(url, async (db) => expect(await db.task.count({ where: { jobId } })).toBe(TASKS));
  }, 180_000);
});
