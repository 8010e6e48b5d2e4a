import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { killHard, signUp, startWorker, waitFor } from "../support/processes.ts";

// A Market Manager dies while a machine offered to it and to another runs its job (issue 47,
// items 2 and 4; docs/SCALING.md "Several managers"). Two managers, one Node worker offered to
// both. manager-2 is killed with SIGKILL mid-job: manager-1 takes it over, its row of the machine
// departs rather than being taken a second time, manager-1's own row stays, and the job, now
// manager-1's, completes on it with every result paid once. The departed row's leases end as any
// departure ends them, so none stays active on it, and its tasks run again. Started again, manager-2 is offered
// the machine again by the same worker, under the same offer key.

const TASKS = 10;
const SAMPLES = 40_000_000;
const MANAGER_TIMEOUT_MS = 3000;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-overlap-crash-", { MARKET_MANAGER_TIMEOUT_MS: String(MANAGER_TIMEOUT_MS) });

const activeRows = () => withDb(database.url, (db) => db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true, offerKey: true } }));

describe("a manager of a machine offered to several dies", () => {
  it("leaves the machine to the other through its own row, and gets it back when it returns", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    const second = await start("manager-2");
    await waitFor("manager-1 to list both managers to workers", async () => ((await liveManagers(first.url, token)) === 2 ? true : undefined), 20_000);
    const worker = await startWorker(first.url, token, "shared", 1, ["--slots", "2", "--managers", "all"]);
    workers.push(worker);
    const before = await waitFor("the machine's rows at both managers", async () => {
      const rows = await activeRows();
      return rows.length === 2 ? rows : undefined;
    }, 30_000);
    const key = before[0]!.offerKey!;
    const kept = before.find((r) => r.managerId === "manager-1")!.id;
    const lost = before.find((r) => r.managerId === "manager-2")!.id;

    const buyer = await signUp(first.url, "overlap-crash@example.test", ["consumer"], first.outbox);
    const { jobId, decision } = await buyer.jobs.submit.mutate({
      name: "pi through a death",
      manager: "manager-2",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");
    // Killed once it has paid some results and holds leases on its row.
    await waitFor("manager-2 to have accepted a result", async () => ((await acceptedOn(lost)) > 0 ? true : undefined), 60_000);
    await killHard(second.child);

    await jobCompleted(buyer, jobId, "the job to complete after manager-2 died", 120_000);
    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: jobId } }))?.managerId).toBe("manager-1");
      const gone = await db.machine.findUnique({ where: { id: lost }, select: { status: true, departReason: true, managerId: true } });
      // The taker held it last: it read the row in and departed it, as any machine departs.
      expect(gone).toEqual({ status: "departed", departReason: "manager-gone", managerId: "manager-1" });
      // Its leases ended with it (abandoned, as any departure ends them): none active on a departed row.
      expect(await db.lease.count({ where: { status: "active", machine: { status: "departed" } } })).toBe(0);
      expect(await db.lease.count({ where: { machineId: lost, status: "abandoned" } })).toBeGreaterThan(0);
      expect((await db.marketDecision.findMany({ where: { machineId: lost, outcome: "departure" }, select: { reasons: true } })).map((d) => d.reasons)).toEqual([[{ code: "manager-gone" }]]);
      const { accepted } = await expectMarketInvariants(db, [jobId]);
      // Its results came from manager-2's row before the death, and from manager-1's own row after.
      expect(new Set(accepted.map((r) => r.machineId))).toEqual(new Set([lost, kept]));
    });
    // manager-1 holds the machine once: its own row, still the one it had.
    expect((await activeRows()).map((r) => [r.id, r.managerId])).toEqual([[kept, "manager-1"]]);

    // manager-2 returns, empty: the worker offers the machine to it again, under the same key.
    await start("manager-2");
    const after = await waitFor("the worker to offer the machine to manager-2 again", async () => {
      const rows = await activeRows();
      return rows.length === 2 ? rows : undefined;
    }, 60_000);
    expect(after.map((r) => r.managerId).sort()).toEqual(["manager-1", "manager-2"]);
    expect(after.every((r) => r.offerKey === key)).toBe(true);
    expect(after.find((r) => r.managerId === "manager-1")!.id).toBe(kept);
  });
});

/** How many live managers `url` lists to a worker (worker.managers). */
async function liveManagers(url: string, token: string) {
  const res = await fetch(`${url}/api/trpc/worker.managers`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { result: { data: { managers: unknown[] } } }).result.data.managers.length;
}

function acceptedOn(machineId: string) {
  return withDb(database.url, (db) => db.result.count({ where: { lease: { machineId }, accepted: true } }));
}
