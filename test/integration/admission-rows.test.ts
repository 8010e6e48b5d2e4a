import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { marketWithMachine } from "../support/worker.ts";
import { writeAdmission, type Admission } from "../../apps/market-manager/src/tasks/admission.ts";
import { inOrder } from "../../apps/market-manager/src/tasks/report-batch.ts";
import { discardIntake, insertTasks } from "../../apps/market-manager/src/tasks/intake.ts";

// A small job's admission writes its tasks and the leases of those leased at once in one
// statement, and a lease row has no foreign keys (migration 20261126150000_lease_rows_unchecked):
// the statement itself must refuse a lease whose task it did not insert leased on that machine,
// writing nothing at all, or a lease could name a task that does not exist.

let market: TestMarket;
let machineId: string;
let ownerId: string;
let moduleHash: string;
const db = () => market.manager.services.db;

beforeAll(async () => {
  market = await startTestMarket();
  const { consumer, machineId: id } = await marketWithMachine(market);
  machineId = id;
  // A job of theirs stores the module the admissions below name.
  const { jobId } = await consumer.jobs.submit.mutate({
    name: "pi",
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: 1 },
    benefit: { kind: "constant", value: 100 },
  });
  const job = await db().job.findUniqueOrThrow({ where: { id: jobId } });
  ownerId = job.ownerId;
  moduleHash = job.moduleHash;
});
afterAll(() => market?.stop());

/** A two-task job admitted with its intake, both tasks placed on the machine, `leased` leased at once. */
function admission(leased: { leaseId: string; taskId: string; machineId: string }[], taskIds: string[]): Admission {
  const now = Date.now();
  return {
    jobId: randomUUID(),
    ownerId,
    status: "admitted",
    record: { outcome: "admitted" },
    now,
    completionAt: now + 60_000,
    priceMicro: 1000n,
    pilotPriceMicro: null,
    pricing: "posted",
    escrowMicro: 1000n,
    maxSpendMicro: null,
    submitNetwork: null,
    decisions: [],
    placed: new Map(taskIds.map((id) => [id, machineId])),
    intake: {
      name: "two",
      nameToProducers: false,
      managerId: "manager-1",
      example: null,
      moduleHash,
      benefit: { kind: "constant", value: 1 },
      replicas: 1,
      taskCount: 2,
      workPerTask: 1,
      declaredWorkPerTask: 1,
      pilotCount: null,
      memoryMbPerTask: 16,
      taskLimits: null,
      tasks: taskIds.map((id, index) => ({ id, index, replica: 0, args: [], stdin: Buffer.alloc(0) })),
    },
    leases: { rows: leased.map((l) => ({ ...l, terms: { issuedAt: now, expiresAt: now + 60_000, pieceRateMicro: 1000n, pilot: false, ahead: 0 } })) },
  };
}

const balance = async () => (await db().ledgerAccount.findFirstOrThrow({ where: { kind: "consumer", userId: ownerId } })).balanceMicro;

describe("a small job's admission with leases", () => {
  it("writes the leases of tasks it inserted leased on their machine", async () => {
    const taskIds = [randomUUID(), randomUUID()];
    const a = admission([{ leaseId: randomUUID(), taskId: taskIds[0]!, machineId }], taskIds);
    await writeAdmission(inOrder(market.manager.services.market), a);
    const lease = await db().lease.findUniqueOrThrow({ where: { id: a.leases!.rows[0]!.leaseId }, include: { task: true } });
    expect(lease).toMatchObject({ status: "active", machineId, task: { id: taskIds[0], status: "leased", machineId } });
    expect((await db().job.findUniqueOrThrow({ where: { id: a.jobId } })).status).toBe("running");
  });

  it("refuses a lease whose task it did not insert, and writes nothing", async () => {
    const before = await balance();
    const taskIds = [randomUUID(), randomUUID()];
    const stray = randomUUID();
    const a = admission(
      [
        { leaseId: randomUUID(), taskId: taskIds[0]!, machineId },
        { leaseId: randomUUID(), taskId: stray, machineId },
      ],
      taskIds,
    );
    await expect(writeAdmission(inOrder(market.manager.services.market), a)).rejects.toThrow(/lease-task-not-inserted/);
    expect(await db().job.findUnique({ where: { id: a.jobId } })).toBeNull();
    expect(await db().task.count({ where: { id: { in: [...taskIds, stray] } } })).toBe(0);
    expect(await db().lease.count({ where: { id: { in: a.leases!.rows.map((r) => r.leaseId) } } })).toBe(0);
    expect(await balance()).toBe(before);
  });
});

// A task row has no foreign keys either (migration 20261126190000_task_rows_unchecked): a big
// job's chunk of tasks must fail whole when its job is gone, and a job discarded in intake must
// take its tasks with it.
describe("a big job's tasks", () => {
  const tasks = (n: number) => Array.from({ length: n }, (_, index) => ({ id: randomUUID(), index, replica: 0, args: ["x"], stdin: Buffer.from("in") }));

  /** A job row in intake (stored, not decided), as a big job's intake writes it first. */
  async function jobInIntake() {
    const id = randomUUID();
    await db().job.create({
      data: { id, ownerId, name: "big", moduleHash, benefit: { kind: "constant", value: 1 }, status: "delayed", decision: { outcome: "delayed", reasons: [] }, taskCount: 3, workPerTask: 1, declaredWorkPerTask: 1, memoryMbPerTask: 16 },
    });
    return id;
  }

  it("are refused whole, none written, when their job is not there", async () => {
    const rows = tasks(3);
    await expect(insertTasks(market.manager.services.database, randomUUID(), rows)).rejects.toThrow(/jobId/);
    expect(await db().task.count({ where: { id: { in: rows.map((t) => t.id) } } })).toBe(0);
  });

  it("are stored as given, whatever their arguments, inputs and environment hold", async () => {
    const jobId = await jobInIntake();
    const odd = ['a "quoted" arg', "back\\slash\\", "{braces,comma}", "NULL", "", "ünïcödé ✓", "line\nbreak"];
    const rows = Array.from({ length: 3 }, (_, index) => ({
      id: randomUUID(),
      index,
      replica: index % 2,
      args: [...odd, String(index)],
      stdin: Buffer.from([0, 255, 92, 34, 10, index]),
      env: index === 0 ? null : { QUOTE: '"', SLASH: "\\", EMPTY: "" },
      files: index === 2 ? { "/in/data.bin": Buffer.from([0, 1, 2, 92]).toString("base64") } : null,
    }));
    await insertTasks(market.manager.services.database, jobId, rows);
    const stored = await db().task.findMany({ where: { jobId }, orderBy: { index: "asc" } });
    expect(stored.map((t) => ({ id: t.id, index: t.index, replica: t.replica, args: t.args, stdin: Buffer.from(t.stdin), env: t.env, files: t.files }))).toEqual(rows);
  });

  it("go with their job when its intake is discarded, and a decided job keeps its own", async () => {
    const discarded = await jobInIntake();
    const kept = await jobInIntake();
    await insertTasks(market.manager.services.database, discarded, tasks(3));
    await insertTasks(market.manager.services.database, kept, tasks(3));
    await db().job.update({ where: { id: kept }, data: { decidedAt: new Date(), status: "running" } });
    expect(await discardIntake(db(), discarded)).toBe(true);
    expect(await discardIntake(db(), kept)).toBe(false);
    expect(await db().job.findUnique({ where: { id: discarded } })).toBeNull();
    expect(await db().task.count({ where: { jobId: discarded } })).toBe(0);
    expect(await db().task.count({ where: { jobId: kept } })).toBe(3);
  });
});
