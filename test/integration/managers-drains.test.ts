import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { signIn } from "../support/market.ts";
import { signUp, startWorker, waitFor } from "../support/processes.ts";

// An admin moves a busy machine between Market Managers (issue 47, item 2): it drains. Two managers
// on one PostgreSQL, each holding one machine. manager-1's machine is running a long task of a
// job of manager-1's when the admin, signed in at manager-2, moves it to manager-2: the answer says
// it is draining, /admin's overview shows where to, a cancel undoes it and a second move drains it
// again. Its manager gives it no new task; its running task finishes and is paid once; then it is
// handed over, and runs a job of manager-2's. The job it left completes on manager-1's other
// machine (the fair share hands manager-2's unpinned machine over), and the ledger sums to zero.

/** Long enough (a few seconds) that the admin's move lands while the first task runs. */
const LONG_SAMPLES = 200_000_000;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-drains-");

const machineRow = (id: string) =>
  withDb(database.url, (db) => db.machine.findUniqueOrThrow({ where: { id }, select: { managerId: true, drainingTo: true, drainingSince: true, pinnedAt: true } }));

describe("an admin moving a busy machine between Market Managers", () => {
  it("drains it: no new work, its running task finishes and is paid once, then it moves and works for the new manager", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    workers.push(await startWorker(first.url, token, "drained", 1));
    const second = await start("manager-2");
    workers.push(await startWorker(second.url, token, "other", 1));
    const drained = workers[0]!.machineIds()[0]!;
    const other = workers[1]!.machineIds()[0]!;
    expect((await machineRow(drained)).managerId).toBe("manager-1");
    expect((await machineRow(other)).managerId).toBe("manager-2");

    const { email, password } = first.admin!;
    const admin = await signIn(second.url, email, password);
    await waitFor("manager-2 to see both managers alive", async () => ((await admin.admin.managers.query()).managers.filter((m) => m.alive).length === 2 ? true : undefined), 20_000);

    // A job of manager-1's, whose only machine is the one to be moved.
    const buyer = await signUp(first.url, "drain-buyer@example.test", ["consumer"], first.outbox);
    const left = await buyer.jobs.submit.mutate({
      name: "long tasks on manager-1",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: LONG_SAMPLES }, taskCount: 2 },
      benefit: { kind: "constant", value: 50 },
    });
    expect(left.decision.outcome).toBe("admitted");
    await waitFor(
      "the machine to run the job's first task",
      () => withDb(database.url, async (db) => ((await db.lease.count({ where: { machineId: drained, status: "active" } })) > 0 ? true : undefined)),
      60_000,
      50,
    );

    // Busy: it drains toward manager-2 rather than being refused.
    const draining = { machineId: drained, moved: false, state: "draining", reason: { code: "machine-draining", machineId: drained, fromManagerId: "manager-1", toManagerId: "manager-2" } };
    expect((await admin.admin.moveMachines.mutate({ machineIds: [drained], toManager: "manager-2" })).moves).toMatchObject([draining]);
    expect(await machineRow(drained)).toMatchObject({ managerId: "manager-1", drainingTo: "manager-2" });
    const shown = (await admin.admin.overview.query()).machines.find((m) => m.id === drained);
    expect(shown).toMatchObject({ manager: "manager-1", drainingTo: "manager-2" });

    // Cancelled: it is no longer draining (a machine that is not draining says so); moved again, it drains again.
    expect((await admin.admin.cancelDrains.mutate({ machineIds: [drained, other] })).cancels).toEqual([
      { machineId: drained, cancelled: true },
      { machineId: other, cancelled: false, reason: { code: "machine-not-draining", machineId: other } },
    ]);
    expect(await machineRow(drained)).toMatchObject({ managerId: "manager-1", drainingTo: null });
    expect((await admin.admin.moveMachines.mutate({ machineIds: [drained], toManager: "manager-2" })).moves).toMatchObject([draining]);
    const drainedSince = (await machineRow(drained)).drainingSince!;
    expect(drainedSince).not.toBeNull();

    // Its leases end, and its manager hands it over: pinned with manager-2, no longer draining.
    await waitFor("the drained machine to be handed to manager-2", async () => ((await machineRow(drained)).managerId === "manager-2" ? true : undefined), 90_000);
    expect(await machineRow(drained)).toMatchObject({ drainingTo: null, pinnedAt: expect.any(Date) });
    const log = await admin.admin.decisions.query({ machineId: drained });
    const codes = log.decisions.flatMap((d) => (d.reasons as { code: string }[]).map((r) => r.code));
    expect(codes).toEqual(expect.arrayContaining(["machine-draining", "machine-drain-cancelled", "machine-handed"]));

    await withDb(database.url, async (db) => {
      // What it ran for manager-1's job: leased before the last drain began, nothing after; each finished with its result accepted.
      const leases = await db.lease.findMany({ where: { machineId: drained, task: { jobId: left.jobId } }, include: { result: true } });
      expect(leases.length).toBeGreaterThan(0);
      for (const l of leases) {
        expect(l.issuedAt.getTime()).toBeLessThanOrEqual(drainedSince.getTime());
        expect(l.status).not.toBe("active");
        expect(l.result?.accepted).toBe(true);
      }
    });

    // manager-2 now holds both, above its fair share: the machine the admin did not place goes to
    // manager-1, which finishes the job the drained machine left.
    await jobCompleted(buyer, left.jobId, "manager-1's job to complete", 120_000);

    // The moved machine's worker follows: a job of manager-2's runs on it.
    const newcomer = await signUp(second.url, "drain-newcomer@example.test", ["consumer"], second.outbox);
    const next = await newcomer.jobs.submit.mutate({
      name: "after the drain",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 200_000 }, taskCount: 3 },
      benefit: { kind: "constant", value: 50 },
    });
    expect(next.decision.outcome).toBe("admitted");
    await jobCompleted(newcomer, next.jobId, "manager-2's job to complete on the moved machine");

    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: next.jobId } }))?.managerId).toBe("manager-2");
      const { accepted } = await expectMarketInvariants(db, [left.jobId, next.jobId]);
      const tasks = await db.task.findMany({ where: { id: { in: accepted.map((r) => r.taskId) } }, select: { id: true, jobId: true } });
      const jobOf = new Map(tasks.map((t) => [t.id, t.jobId]));
      const byJob = (jobId: string) => new Set(accepted.filter((r) => jobOf.get(r.taskId) === jobId).map((r) => r.machineId));
      expect(byJob(next.jobId)).toEqual(new Set([drained]));
      // The job it left ran on manager-1's machines only: the drained one before its move, the other after.
      for (const m of byJob(left.jobId)) expect([drained, other]).toContain(m);
    });
  });
});
