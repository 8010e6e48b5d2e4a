import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { signUp, startWorker, waitFor } from "../support/processes.ts";

// A machine offered to every live Market Manager (`--managers all`; issue 47, item 2: the subsets
// may intersect and change on line) is offered to a manager that joins after the worker started:
// the worker reads the live managers again, the machine gets a row of its own at the newcomer under
// the same offer key, and a job submitted there runs on it, each result paid once.

const TASKS = 4;
const SAMPLES = 5_000_000;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-overlap-join-");

const activeRows = () => withDb(database.url, (db) => db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true, offerKey: true } }));

describe("a Market Manager that joins after a machine was offered to all", () => {
  it("is offered the machine too, and runs a job on it", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    await start("manager-2");
    await waitFor("manager-1 to list both managers to workers", async () => ((await liveManagers(first.url, token)) === 2 ? true : undefined), 20_000);
    const worker = await startWorker(first.url, token, "shared", 1, ["--slots", "2", "--managers", "all"]);
    workers.push(worker);
    const before = await waitFor("the machine's rows at both managers", async () => {
      const rows = await activeRows();
      return rows.length === 2 ? rows : undefined;
    }, 30_000);
    expect(before.map((r) => r.managerId).sort()).toEqual(["manager-1", "manager-2"]);

    await start("manager-3");
    const after = await waitFor("the worker to offer the machine to manager-3 as well", async () => {
      const rows = await activeRows();
      return rows.length === 3 ? rows : undefined;
    }, 30_000);
    expect(after.map((r) => r.managerId).sort()).toEqual(["manager-1", "manager-2", "manager-3"]);
    expect(new Set(after.map((r) => r.offerKey))).toEqual(new Set([before[0]!.offerKey]));
    const third = after.find((r) => r.managerId === "manager-3")!.id;

    const buyer = await signUp(first.url, "overlap-join@example.test", ["consumer"], first.outbox);
    const { jobId, decision } = await buyer.jobs.submit.mutate({
      name: "pi at the newcomer",
      manager: "manager-3",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
      benefit: { kind: "constant", value: 50 },
    });
    expect(decision.outcome).toBe("admitted");
    await jobCompleted(buyer, jobId, "manager-3's job to complete");
    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: jobId } }))?.managerId).toBe("manager-3");
      const { accepted } = await expectMarketInvariants(db, [jobId]);
      expect(new Set(accepted.map((r) => r.machineId))).toEqual(new Set([third]));
    });
  });
});

/** How many live managers `url` lists to a worker (worker.managers). */
async function liveManagers(url: string, token: string) {
  const res = await fetch(`${url}/api/trpc/worker.managers`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { result: { data: { managers: unknown[] } } }).result.data.managers.length;
}
