import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { expectLedgerBalances, expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { clientFor, signIn } from "../support/market.ts";
import { signUp, startWorker, waitFor } from "../support/processes.ts";

// An admin moves a busy machine between Market Managers (issue 47, item 2): it drains. Two managers
// on one PostgreSQL; manager-1 holds the only machine, which is running the first of two long
// tasks of a job of manager-1's when the admin, signed in at manager-2, moves it to manager-2:
// the answer says it is draining, /admin's overview shows where to, a cancel undoes it and a
// second move drains it again. Its manager gives it no new task (the job's second task waits,
// with no other machine at manager-1, until its consumer cancels the job); its running task
// finishes and is paid once; then it is handed over, and runs a job of manager-2's. The ledger
// sums to zero. A dedicated machine is refused, naming the end of its contract.

/** Long enough (a few seconds) that the admin's calls land while the first task runs, short of its lease. */
const LONG_SAMPLES = 150_000_000;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-drains-");

const machineRow = (id: string) =>
  withDb(database.url, (db) => db.machine.findUniqueOrThrow({ where: { id }, select: { managerId: true, drainingTo: true, drainingSince: true, pinnedAt: true, handedAt: true, follows: true } }));

describe("an admin moving a busy machine between Market Managers", () => {
  it("drains it: no new work, its running task finishes and is paid once, then it moves and works for the new manager", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    workers.push(await startWorker(first.url, token, "drained", 1));
    const second = await start("manager-2");
    const drained = workers[0]!.machineIds()[0]!;
    expect((await machineRow(drained)).managerId).toBe("manager-1");

    const { email, password } = first.admin!;
    const admin = await signIn(second.url, email, password);
    await waitFor("manager-2 to see both managers alive", async () => ((await admin.admin.managers.query()).managers.filter((m) => m.alive).length === 2 ? true : undefined), 20_000);

    // A job of manager-1's, on its only machine, the one to be moved.
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

    // Cancelled: it is no longer draining; moved again, it drains again.
    expect((await admin.admin.cancelDrains.mutate({ machineIds: [drained] })).cancels).toEqual([{ machineId: drained, cancelled: true }]);
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

    // Nothing at manager-1 may run the job's second task: it waits, unleased, until its consumer cancels the job.
    expect((await withDb(database.url, (db) => db.task.findMany({ where: { jobId: left.jobId }, orderBy: { index: "asc" }, select: { status: true } }))).map((t) => t.status)).toEqual(["done", "pending"]);
    await buyer.jobs.cancel.mutate({ jobId: left.jobId });

    // The moved machine's worker follows: once manager-2 has read it in, a job of manager-2's runs on it.
    await waitFor("manager-2 to read the machine in", async () => ((await machineRow(drained)).handedAt === null ? true : undefined), 30_000);
    const newcomer = await signUp(second.url, "drain-newcomer@example.test", ["consumer"], second.outbox);
    const next = await newcomer.jobs.submit.mutate({
      name: "after the drain",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 200_000 }, taskCount: 3 },
      benefit: { kind: "constant", value: 50 },
    });
    expect(next.decision.outcome).toBe("admitted");
    await jobCompleted(newcomer, next.jobId, "manager-2's job to complete on the moved machine");
    // There is no drain left to cancel.
    expect((await admin.admin.cancelDrains.mutate({ machineIds: [drained] })).cancels).toEqual([{ machineId: drained, cancelled: false, reason: { code: "machine-not-draining", machineId: drained } }]);

    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: next.jobId } }))?.managerId).toBe("manager-2");
      const { accepted } = await expectMarketInvariants(db, [next.jobId]);
      expect(new Set(accepted.map((r) => r.machineId))).toEqual(new Set([drained]));
      // The task it finished for manager-1's job: one accepted result, paid once (at once, or, a run
      // later than the market expected on a loaded machine, held in the escrow and settled with the
      // job); the job settled once.
      const done = await db.result.findMany({ where: { lease: { task: { jobId: left.jobId } }, accepted: true }, include: { lease: { select: { machineId: true } } } });
      expect(done.map((r) => r.lease.machineId)).toEqual([drained]);
      const run = done[0]!;
      const paid = await db.ledgerEntry.findMany({ where: { jobId: left.jobId, kind: "payment" } });
      // Paid at once is one payment entry: its own (`pay:<result>`) or its report group's.
      expect({ late: run.late, payments: paid.length, held: (run.heldMicro ?? 0n) > 0n }).toEqual(
        run.late ? { late: true, payments: 0, held: true } : { late: false, payments: 1, held: false },
      );
      expect(await db.ledgerEntry.count({ where: { jobId: left.jobId, kind: "settlement" } })).toBe(1);
      await expectLedgerBalances(db);
    });

    // A dedicated machine does not drain: its contract stays with its manager, and the refusal says until when.
    const departsAt = Date.now() + 120_000;
    const rack = clientFor(second.url, { authorization: `Bearer ${token}` });
    const { machineId: dedicated } = await rack.worker.register.mutate({
      name: "under contract",
      kind: "dedicated",
      slots: 4,
      contractPrice: 0.01,
      departsAt,
      memoryPerSlotMb: 512,
      bandwidthBytesPerSecond: 1e7,
      userAgent: "test",
      speed: 1,
      pricePerSecond: 0,
    });
    const refused = (await admin.admin.moveMachines.mutate({ machineIds: [dedicated], toManager: "manager-1" })).moves;
    expect(refused).toEqual([{ machineId: dedicated, moved: false, state: "refused", reason: { code: "machine-dedicated", machineId: dedicated, contractEndsAt: expect.any(Number) } }]);
    expect(Math.abs((refused[0] as { reason: { contractEndsAt: number } }).reason.contractEndsAt - departsAt)).toBeLessThan(1000);
    expect(await machineRow(dedicated)).toMatchObject({ managerId: "manager-2", drainingTo: null });

    // A machine whose worker does not follow a move (a browser page behind the web app registers
    // without `follow`) stays where it joined: told `machine-moved` it would join again as another.
    const { machineId: tab } = await rack.worker.register.mutate({
      name: "a browser tab",
      kind: "opportunistic",
      slots: 1,
      memoryPerSlotMb: 512,
      bandwidthBytesPerSecond: 1e7,
      userAgent: "test",
      speed: 1,
      pricePerSecond: 0.5,
    });
    expect((await admin.admin.moveMachines.mutate({ machineIds: [tab], toManager: "manager-1" })).moves).toEqual([
      { machineId: tab, moved: false, state: "refused", reason: { code: "machine-cannot-follow", machineId: tab } },
    ]);
    expect(await machineRow(tab)).toMatchObject({ managerId: "manager-2", drainingTo: null, follows: false });
  }, 240_000);
});
