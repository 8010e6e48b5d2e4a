import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { refusal, signIn } from "../support/market.ts";
import { signUp, startWorker, waitFor } from "../support/processes.ts";

// An admin moves machines between Market Managers on line (issue 47, item 2). Two managers on one
// PostgreSQL, each holding one machine. The admin, signed in at manager-2, moves manager-1's
// machine to manager-2: the call is sent on to manager-1, which holds it, and the move is in the
// decision log. The machine stays where the admin put it (the fair share hands manager-2's other
// machine to manager-1 instead), and its worker follows: a job submitted to manager-2 runs on it.

const TASKS = 4;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-moves-");

const holders = (url: string) =>
  withDb(url, async (db) => {
    const rows = await db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true, pinnedAt: true } });
    return new Map(rows.map((r) => [r.id, r]));
  });

describe("an admin moving a machine between Market Managers", () => {
  it("hands it over, logs it, keeps it there, and its worker runs the new manager's work", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    workers.push(await startWorker(first.url, token, "moved", 1));
    const second = await start("manager-2");
    workers.push(await startWorker(second.url, token, "stays", 1));
    const moved = workers[0]!.machineIds()[0]!;
    const other = workers[1]!.machineIds()[0]!;
    expect([...(await holders(database.url))].map(([id, r]) => [id, r.managerId]).sort()).toEqual([[moved, "manager-1"], [other, "manager-2"]].sort());

    const { email, password } = first.admin!;
    const admin = await signIn(second.url, email, password);
    await waitFor("manager-2 to see both managers alive", async () => ((await admin.admin.managers.query()).managers.filter((m) => m.alive).length === 2 ? true : undefined), 20_000);

    // A manager that is not in the market: refused whole, nothing moves.
    expect(await refusal(admin.admin.moveMachines.mutate({ machineIds: [moved], toManager: "manager-9" }))).toMatchObject({ code: "manager-not-live", managerId: "manager-9" });
    expect((await holders(database.url)).get(moved)?.managerId).toBe("manager-1");

    // Asked of manager-2, moved by manager-1, which holds it.
    const answer = await admin.admin.moveMachines.mutate({ machineIds: [moved, other], toManager: "manager-2" });
    expect(answer.moves).toEqual([
      { machineId: moved, moved: true, state: "moved" },
      { machineId: other, moved: false, state: "refused", reason: { code: "machine-already-there", machineId: other, managerId: "manager-2" } },
    ]);
    const after = await holders(database.url);
    expect(after.get(moved)?.managerId).toBe("manager-2");
    expect(after.get(moved)?.pinnedAt).not.toBeNull();

    const log = await admin.admin.decisions.query({ machineId: moved });
    expect(log.decisions.map((d) => [d.outcome, d.reasons])).toContainEqual(["move", [{ code: "machine-handed", fromManagerId: "manager-1", toManagerId: "manager-2" }]]);

    // manager-2 now holds both, above its fair share of one: it hands the machine the admin did
    // not place to manager-1, and keeps the one the admin did.
    await waitFor("the fair share to hand the other machine to manager-1", async () => ((await holders(database.url)).get(other)?.managerId === "manager-1" ? true : undefined), 30_000);
    expect((await holders(database.url)).get(moved)?.managerId).toBe("manager-2");

    // The moved machine's worker follows: a job of manager-2's runs on it.
    const buyer = await signUp(second.url, "mover@example.test", ["consumer"], second.outbox);
    const { jobId, decision } = await buyer.jobs.submit.mutate({
      name: "pi on the moved machine",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 200_000 }, taskCount: TASKS },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");
    await jobCompleted(buyer, jobId, "the job on manager-2 to complete");
    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: jobId } }))?.managerId).toBe("manager-2");
      const { accepted } = await expectMarketInvariants(db, [jobId]);
      expect(new Set(accepted.map((r) => r.machineId))).toEqual(new Set([moved]));
    });
  });
});
