import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { expectMarketInvariants, withDb } from "../support/books.ts";
import { jobCompleted, managersOnOneDatabase } from "../support/managers.ts";
import { refusal, signIn } from "../support/market.ts";
import { signUp, startWorker, waitFor } from "../support/processes.ts";

// One machine offered to two Market Managers at once (issue 47, item 2: the subsets may intersect;
// the Java Market paper, section 4.4). A Node worker of two slots started with `--managers all`
// registers with both: each holds a row of its own, linked by one offer key, and /admin says so.
// A job submitted to each manager runs on that manager's row of the one machine, the machine never
// holds more leases than its slots across both, each manager pays its own results once, and the
// ledger sums to zero. A dedicated offer to several is refused with its reason, and a registration
// of the same machine again finds no manager left to offer it to. A third manager that joins later
// is offered the machine too, and runs a job on its row.

const SLOTS = 2;
const TASKS = 6;
const SAMPLES = 20_000_000;

const { database, workers, start } = await managersOnOneDatabase("cyclemarket-overlap-");

const job = (name: string, manager: string) => ({
  name,
  manager,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: SAMPLES }, taskCount: TASKS },
  benefit: { kind: "constant" as const, value: 50 },
});

/** The most leases held at one instant across these machines' rows, from when each was issued and ended. */
function mostLeasesAtOnce(leases: { issuedAt: Date; endedAt: Date | null }[]): number {
  const edges = leases.flatMap((l) => [
    { at: l.issuedAt.getTime(), d: 1 },
    { at: (l.endedAt ?? new Date(8.64e15)).getTime(), d: -1 },
  ]);
  // At one instant an end comes before a start: a place freed and taken in the same millisecond.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}

/** worker.register over HTTP with the producer's token, as the Node worker sends it. */
async function register(url: string, token: string, body: Record<string, unknown>) {
  const res = await fetch(`${url}/api/trpc/worker.register`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: "probe", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 256, bandwidthBytesPerSecond: 1e7, pricePerSecond: 1, userAgent: "test", follow: true, ...body }),
  });
  return (await res.json()) as { result?: { data: { machineId: string } }; error?: { data?: { reason?: { code: string } } } };
}

describe("one machine offered to two Market Managers", () => {
  it("runs both managers' jobs within its slots, each paid once by its own manager, and is offered to one that joins", async () => {
    const first = await start("manager-1");
    const token = readFileSync(first.tokenFile, "utf8").trim();
    const second = await start("manager-2");
    const admin = await signIn(first.url, first.admin!.email, first.admin!.password);
    await waitFor("manager-1 to see both managers alive", async () => ((await admin.admin.managers.query()).managers.filter((m) => m.alive).length === 2 ? true : undefined), 20_000);

    const worker = await startWorker(first.url, token, "shared", 1, ["--slots", String(SLOTS), "--managers", "all"]);
    workers.push(worker);
    const ids = await waitFor("the worker to register with both managers", async () => (worker.machineIds().length >= 2 ? worker.machineIds() : undefined), 30_000);
    expect(ids).toHaveLength(2);
    const rows = await withDb(database.url, (db) => db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true, offerKey: true, slots: true, kind: true } }));
    expect(rows.map((r) => r.managerId).sort()).toEqual(["manager-1", "manager-2"]);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(ids));
    expect(rows[0]!.offerKey).toBeTruthy();
    expect(rows[1]!.offerKey).toBe(rows[0]!.offerKey);
    for (const r of rows) expect({ slots: r.slots, kind: r.kind }).toEqual({ slots: SLOTS, kind: "opportunistic" });
    const rowOf = Object.fromEntries(rows.map((r) => [r.managerId!, r.id]));

    // The admin sees one machine offered to both.
    const overview = await admin.admin.overview.query();
    const shown = Object.fromEntries(overview.machines.filter((m) => ids.includes(m.id)).map((m) => [m.manager, m.alsoOfferedTo]));
    expect(shown).toEqual({ "manager-1": ["manager-2"], "manager-2": ["manager-1"] });

    // The same machine again, to a manager that holds it: no live manager is left to offer it to.
    const again = await register(first.url, token, { offerKey: rows[0]!.offerKey, manager: "manager-1" });
    expect(again.error?.data?.reason).toEqual({ code: "offered-to-every-manager", managers: 2 });
    // A dedicated machine is offered to one manager only: refused, naming why, and nothing written.
    const dedicated = await register(first.url, token, { kind: "dedicated", offerKey: randomUUID(), departsAt: Date.now() + 3_600_000, contractPrice: 10 });
    expect(dedicated.error?.data?.reason).toEqual({ code: "dedicated-offered-to-several" });
    // An admin does not move a machine offered to several: each manager's row stays its own.
    const move = await admin.admin.moveMachines.mutate({ machineIds: [rowOf["manager-1"]!], toManager: "manager-2" });
    expect(move.moves).toEqual([{ machineId: rowOf["manager-1"], moved: false, state: "refused", reason: { code: "machine-offered-to-several", machineId: rowOf["manager-1"] } }]);

    // A job submitted to each manager, at once: both run on the one machine.
    const buyer = await signUp(first.url, "overlap@example.test", ["consumer"], first.outbox);
    const [one, two] = await Promise.all([buyer.jobs.submit.mutate(job("pi at manager-1", "manager-1")), buyer.jobs.submit.mutate(job("pi at manager-2", "manager-2"))]);
    expect([one.decision.outcome, two.decision.outcome]).toEqual(["admitted", "admitted"]);
    await jobCompleted(buyer, one.jobId, "manager-1's job to complete");
    await jobCompleted(buyer, two.jobId, "manager-2's job to complete");

    await withDb(database.url, async (db) => {
      const owners = await db.job.findMany({ where: { id: { in: [one.jobId, two.jobId] } }, select: { id: true, managerId: true } });
      expect(Object.fromEntries(owners.map((j) => [j.id, j.managerId]))).toEqual({ [one.jobId]: "manager-1", [two.jobId]: "manager-2" });
      // Every result paid once, each job settled once, the ledger at zero.
      const { accepted } = await expectMarketInvariants(db, [one.jobId, two.jobId]);
      const tasks = await db.task.findMany({ where: { jobId: { in: [one.jobId, two.jobId] } }, select: { id: true, jobId: true } });
      const jobOf = new Map(tasks.map((t) => [t.id, t.jobId]));
      // Each manager's results came from its own row of the machine.
      for (const r of accepted) expect({ job: jobOf.get(r.taskId), machine: r.machineId }).toEqual({ job: jobOf.get(r.taskId), machine: jobOf.get(r.taskId) === one.jobId ? rowOf["manager-1"] : rowOf["manager-2"] });
      // The two managers together never leased the machine more tasks than its slots.
      const leases = await db.lease.findMany({ where: { machineId: { in: ids } }, select: { issuedAt: true, endedAt: true, status: true, machineId: true } });
      expect(new Set(leases.map((l) => l.machineId))).toEqual(new Set(ids));
      expect(leases.every((l) => l.status === "completed")).toBe(true);
      expect(mostLeasesAtOnce(leases)).toBeLessThanOrEqual(SLOTS);
    });

    // A manager that joins later is offered the machine too: the worker reads the live managers
    // again, and the newcomer holds a row of its own under the same offer key and runs a job on it.
    await start("manager-3");
    const after = await waitFor("the worker to offer the machine to manager-3 as well", async () => {
      const active = await withDb(database.url, (db) => db.machine.findMany({ where: { status: "active" }, select: { id: true, managerId: true, offerKey: true } }));
      return active.length === 3 ? active : undefined;
    }, 30_000);
    expect(after.map((r) => r.managerId).sort()).toEqual(["manager-1", "manager-2", "manager-3"]);
    expect(new Set(after.map((r) => r.offerKey))).toEqual(new Set([rows[0]!.offerKey]));
    const third = after.find((r) => r.managerId === "manager-3")!.id;
    const late = await buyer.jobs.submit.mutate({ ...job("pi at the newcomer", "manager-3"), source: { ...job("", "").source, taskCount: 2 } });
    expect(late.decision.outcome).toBe("admitted");
    await jobCompleted(buyer, late.jobId, "manager-3's job to complete");
    await withDb(database.url, async (db) => {
      expect((await db.job.findUnique({ where: { id: late.jobId } }))?.managerId).toBe("manager-3");
      const { accepted } = await expectMarketInvariants(db, [one.jobId, two.jobId, late.jobId]);
      const lateTasks = new Set((await db.task.findMany({ where: { jobId: late.jobId }, select: { id: true } })).map((t) => t.id));
      expect(new Set(accepted.filter((r) => lateTasks.has(r.taskId)).map((r) => r.machineId))).toEqual(new Set([third]));
    });
  });
});
