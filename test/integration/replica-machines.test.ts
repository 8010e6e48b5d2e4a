import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTask } from "../../apps/worker-runtime/src/sandbox.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { startWorker, stopGently, type WorkerProcess } from "../support/processes.ts";
import { expectLedgerBalances } from "../support/books.ts";

// Copies of a task run on machines of different owners (that is what makes their agreement worth
// anything). When the market has too few owners' machines for that, the consumer is told so, in
// numbers, and the copy runs as soon as a machine of another owner connects.

let market: TestMarket;
type Consumer = Awaited<ReturnType<TestMarket["signUp"]>>;
type Worker = ReturnType<TestMarket["tokenClient"]>;
let consumer: Consumer;
let owners = 0;
let a: { client: Worker; machineId: string };
const started: WorkerProcess[] = [];

const offer = (name: string) => ({
  name, kind: "opportunistic" as const, slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test",
});
const pi = (name: string, taskCount: number, replicas: number) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 20_000 }, taskCount },
  benefit: { kind: "constant" as const, value: 50 },
  replicas,
});

/** A producer of their own and the token their workers use. */
async function producerToken() {
  owners += 1;
  const producer = await market.signUp(`seller-${owners}@example.test`, ["producer"]);
  return (await producer.account.tokens.create.mutate({ name: "rack" })).token;
}

/** One machine of a new owner. */
async function machine(name: string) {
  const client = market.tokenClient(await producerToken());
  const { machineId } = await client.worker.register.mutate(offer(name));
  return { client, machineId };
}

beforeAll(async () => {
  // A lease timeout far beyond the test, so the hand-driven machines never miss a heartbeat.
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  a = await machine("only-one");
});
afterAll(async () => {
  for (const w of started) await stopGently(w.child);
  await market?.stop();
});

async function runHonestly(w: { client: Worker; machineId: string }, lease: { leaseId: string; seed?: string | undefined; taskId: string; moduleHash: string; args: string[]; limits: { memoryPages: number; outputBytes: number } }) {
  const { bytes } = await w.client.worker.module.query({ moduleHash: lease.moduleHash });
  const out = await runTask({ module: new Uint8Array(Buffer.from(bytes, "base64")), args: lease.args, seed: lease.seed ?? lease.taskId, limits: lease.limits });
  await w.client.worker.report.mutate({
    machineId: w.machineId, leaseId: lease.leaseId, exitCode: out.exitCode, stdout: Buffer.from(out.stdout).toString("base64"), stderr: "", outputHash: out.outputHash, elapsedMs: 500,
  });
}

describe("replicas and the machines connected", () => {
  it("delays a job that asks for more copies than there are owners with machines, says so, and admits it once there are enough", async () => {
    const quote = await consumer.jobs.quote.mutate(pi("three copies", 1, 3));
    expect(quote.outcome).toBe("delayed");
    expect(quote.reasons).toContainEqual({ code: "needs-more-machines", replicas: 3, machinesConnected: 1, ownersConnected: 1 });

    const { jobId, decision } = await consumer.jobs.submit.mutate(pi("three copies", 1, 3));
    expect(decision.outcome).toBe("delayed");
    expect(decision.reasons).toContainEqual({ code: "needs-more-machines", replicas: 3, machinesConnected: 1, ownersConnected: 1 });
    let job = await consumer.jobs.get.query({ jobId });
    expect(job.escrowHeld).toBe(0);
    expect(job.waiting).toEqual({ total: 1, reasons: [{ code: "needs-more-machines", replicas: 3, machinesConnected: 1, ownersConnected: 1 }] });

    // The count the consumer sees follows the machines that connect.
    const b = await machine("second");
    job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("delayed");
    expect(job.waiting.reasons).toEqual([{ code: "needs-more-machines", replicas: 3, machinesConnected: 2, ownersConnected: 2 }]);

    const c = await machine("third");
    await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status, { timeout: 10_000 }).toBe("admitted");
    job = await consumer.jobs.get.query({ jobId });
    expect(job.waiting).toEqual({ total: 0, reasons: [] });
    expect(job.escrowHeld).toBeGreaterThan(0); // the posted price and its contingency, held from admission
    await consumer.jobs.cancel.mutate({ jobId });
    for (const m of [b, c]) await m.client.worker.depart.mutate({ machineId: m.machineId });
  });

  it("tells why a copy waits when only the owner that ran its sibling is left, and runs it when another owner's machine connects", async () => {
    const b = await machine("leaves");
    const { jobId, decision } = await consumer.jobs.submit.mutate(pi("two copies", 2, 2));
    expect(decision.outcome).toBe("admitted");

    // The second machine leaves: its copies come back to the only machine left, which ran their siblings.
    await b.client.worker.depart.mutate({ machineId: b.machineId });
    const { leases } = await a.client.worker.lease.mutate({ machineId: a.machineId, max: 4 });
    expect(leases).toHaveLength(2); // one copy of each task, never both on one machine
    for (const lease of leases) await runHonestly(a, lease);
    expect((await a.client.worker.lease.mutate({ machineId: a.machineId, max: 4 })).leases).toEqual([]);

    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("running");
    expect(job.tasksDone).toBe(0);
    const db = market.manager.services.db;
    const ranOnA = await db.task.findMany({ where: { jobId, status: "done" }, select: { index: true, replica: true } });
    expect(job.waiting.total).toBe(2);
    expect(job.waiting.reasons).toEqual(
      ranOnA
        .sort((x, y) => x.index - y.index)
        .map((t) => ({ code: "needs-another-machine", taskIndex: t.index, copy: 2 - t.replica, copiesOnMachines: [{ copy: t.replica + 1, state: "done" }], machinesConnected: 1, ownersConnected: 1 })),
    );

    // A real Node worker of another owner connects: the waiting copies run on it and the job completes.
    started.push(await startWorker(market.url, await producerToken(), "newcomer"));
    await expect.poll(async () => (await consumer.jobs.get.query({ jobId })).status, { timeout: 30_000 }).toBe("completed");
    const done = await consumer.jobs.get.query({ jobId });
    expect(done.waiting).toEqual({ total: 0, reasons: [] });
    expect(done.tasksDone).toBe(2);
    for (const index of [0, 1]) {
      const accepted = await db.result.findMany({ where: { lease: { task: { jobId, index } }, accepted: true }, select: { lease: { select: { machineId: true } } } }).then((rows) => rows.map(({ lease, ...r }) => ({ ...r, ...lease })));
      expect(accepted).toHaveLength(2);
      expect(new Set(accepted.map((r) => r.machineId)).size).toBe(2);
    }
    expect((await consumer.jobs.outputs.query({ jobId })).map((o) => o.index)).toEqual([0, 1]);
    await expectLedgerBalances(db);
  });
});
