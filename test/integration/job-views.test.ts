import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { acceptedOutputs } from "../../apps/market-manager/src/tasks/views.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// What a job's page reads while its job runs, each in one statement: a page of the accepted
// outputs (in index order, cut at a number of tasks or of bytes, binary byte for byte) and the
// progress chart (when each task was done, after the job arrived).

let market: TestMarket;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;
let jobId: string;
const sizes = [100, 200, 300, 400];
// Every byte value, so a text decoding anywhere on the way would show.
const bytesOf = (i: number) => Buffer.from(Array.from({ length: sizes[i]! }, (_, k) => (k * 7 + i) % 256));

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  ({ worker } = await market.signUpProducer("seller@example.test"));
  ({ machineId } = await worker.worker.register.mutate({ name: "rack one", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" }));
  const submitted = await consumer.jobs.submit.mutate({
    name: "views",
    source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: sizes.map((_, i) => ({ args: [`task-${i}`], stdin: "" })), workPerTask: 0.01, memoryMbPerTask: 16 },
    benefit: { kind: "constant", value: 40 },
  });
  jobId = submitted.jobId;
  const { leases } = await worker.worker.lease.mutate({ machineId, max: 4 });
  expect(leases).toHaveLength(4);
  // Reported out of order: the page is in the tasks' order all the same.
  for (const l of [...leases].reverse()) {
    const i = Number(l.args[0]!.slice("task-".length));
    const out = bytesOf(i);
    const { accepted } = await worker.worker.report.mutate({ machineId, leaseId: l.leaseId, exitCode: 0, stdout: out.toString("base64"), stderr: "", outputHash: createHash("sha256").update(out).digest("hex"), elapsedMs: 5 + i });
    expect(accepted).toBe(true);
  }
});
afterAll(() => market?.stop());

describe("a job's outputs, a page at a time", () => {
  it("are every task's accepted output in index order, byte for byte", async () => {
    const page = await consumer.jobs.outputs.query({ jobId, fromIndex: 0, limit: 50 });
    expect(page.map((o) => o.index)).toEqual([0, 1, 2, 3]);
    expect(page.map((o) => o.args)).toEqual([["task-0"], ["task-1"], ["task-2"], ["task-3"]]);
    for (const o of page) {
      expect(Buffer.from(o.stdoutBase64, "base64").equals(bytesOf(o.index))).toBe(true);
      expect(o.machineName).toBe("rack one");
      expect(o.elapsedMs).toBe(5 + o.index);
    }
  });

  it("stop at the page's number of tasks, from the index asked", async () => {
    const page = await consumer.jobs.outputs.query({ jobId, fromIndex: 1, limit: 2 });
    expect(page.map((o) => o.index)).toEqual([1, 2]);
  });

  it("stop before the task whose output would pass the page's bytes, but always hold one", async () => {
    const db = market.manager.services.db;
    expect((await acceptedOutputs(market.manager.services.database.reads, jobId, 0, 50, 300)).map((o) => o.index)).toEqual([0, 1]);
    expect((await acceptedOutputs(market.manager.services.database.reads, jobId, 0, 50, 299)).map((o) => o.index)).toEqual([0]);
    expect((await acceptedOutputs(market.manager.services.database.reads, jobId, 2, 50, 10)).map((o) => o.index)).toEqual([2]);
    expect((await acceptedOutputs(market.manager.services.database.reads, jobId, 0, 50, Infinity)).map((o) => o.index)).toEqual([0, 1, 2, 3]);
    expect(await acceptedOutputs(market.manager.services.database.reads, jobId, 4, 50)).toEqual([]);
  });
});

describe("a job's progress", () => {
  it("says when each task was done after the job arrived, and when the job completed", async () => {
    const job = await db().job.findUniqueOrThrow({ where: { id: jobId } });
    const progress = await consumer.jobs.progress.query({ jobId });
    expect(progress.status).toBe("completed");
    expect(progress.taskCount).toBe(4);
    expect(progress.arrivedAt).toBe(job.submittedAt.getTime());
    expect(progress.benefit).toEqual({ kind: "constant", value: 40 });
    const tasks = await db().task.findMany({ where: { jobId } });
    const expected = tasks.map((t) => (t.completedAt!.getTime() - job.submittedAt.getTime()) / 1000).sort((a, b) => a - b);
    expect(progress.doneAt).toEqual(expected);
    expect(progress.completed).toBe((job.completedAt!.getTime() - job.submittedAt.getTime()) / 1000);
  });

  it("of someone else's job is refused", async () => {
    const other = await market.signUp("other@example.test", ["consumer"]);
    await expect(other.jobs.progress.query({ jobId })).rejects.toThrow(/No such job/);
  });
});

// Last: it takes "rack one" out of the market.
describe("a job's tasks waiting for a machine", () => {
  it("say so when every connected machine asks more for a task than the job's escrow has left", async () => {
    const { jobId: dear } = await consumer.jobs.submit.mutate({
      name: "priced on a cheap machine",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: [{ args: ["a"], stdin: "" }, { args: ["b"], stdin: "" }], workPerTask: 1, memoryMbPerTask: 16 },
      benefit: { kind: "constant", value: 40 },
    });
    expect((await consumer.jobs.get.query({ jobId: dear })).waiting).toEqual({ total: 0, reasons: [] });
    // The machine it was priced on leaves; one asking a thousand times more takes its place.
    await worker.worker.depart.mutate({ machineId });
    const { machineId: pricey } = await worker.worker.register.mutate({ name: "rack two", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 10, userAgent: "test" });
    expect((await worker.worker.lease.mutate({ machineId: pricey, max: 4 })).leases).toEqual([]);
    const job = await consumer.jobs.get.query({ jobId: dear });
    expect(job.waiting.total).toBe(1);
    const [reason] = job.waiting.reasons;
    expect(reason).toMatchObject({ code: "budget-short", tasks: 2, cheapestPiece: 10, machinesConnected: 1 });
    expect(reason?.code === "budget-short" && reason.left).toBeLessThan(10);
  });
});

const db = () => market.manager.services.db;
