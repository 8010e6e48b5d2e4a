import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { runTask } from "../../apps/worker-runtime/src/sandbox.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// Verification by quorum: copies of a task run on different machines; the result is accepted
// when a majority of output hashes agree; a machine that disagrees is not paid and loses reputation.

let market: TestMarket;
type Worker = ReturnType<TestMarket["tokenClient"]>;
const workers: { client: Worker; machineId: string; owner: Awaited<ReturnType<TestMarket["signUp"]>> }[] = [];

beforeAll(async () => {
  market = await startTestMarket();
  for (const name of ["honest-a", "honest-b", "cheat"]) {
    const owner = await market.signUp(`${name}@example.test`, ["producer"]);
    const client = market.tokenClient((await owner.account.tokens.create.mutate({ name })).token);
    const { machineId } = await client.worker.register.mutate({
      name, kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test",
    });
    workers.push({ client, machineId, owner });
  }
});
afterAll(() => market?.stop());

async function honestReport(w: (typeof workers)[number], lease: { leaseId: string; seed?: string | undefined; taskId: string; moduleHash: string; args: string[]; limits: { memoryPages: number; outputBytes: number } }) {
  const { bytes } = await w.client.worker.module.query({ moduleHash: lease.moduleHash });
  // Copies share the seed the lease carries, so honest machines agree byte for byte.
  const out = await runTask({ module: new Uint8Array(Buffer.from(bytes, "base64")), args: lease.args, seed: lease.seed ?? lease.taskId, limits: lease.limits });
  return { machineId: w.machineId, leaseId: lease.leaseId, exitCode: out.exitCode, stdout: Buffer.from(out.stdout).toString("base64"), stderr: "", outputHash: out.outputHash, elapsedMs: 1000 };
}

describe("replicated tasks", () => {
  it("accepts the majority's output, pays only the machines that agree, and marks the cheat down", async () => {
    const consumer = await market.signUp("buyer@example.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "verified pi",
      source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 100_000 }, taskCount: 1 },
      benefit: { kind: "constant", value: 20 },
      replicas: 3,
    });
    expect(decision.outcome).toBe("admitted");

    // Each machine gets one copy at most, however many it asks for.
    type Leased = Awaited<ReturnType<Worker["worker"]["lease"]["mutate"]>>["leases"][number];
    const leases: { w: (typeof workers)[number]; l: Leased }[] = [];
    for (const w of workers) {
      const { leases: got } = await w.client.worker.lease.mutate({ machineId: w.machineId, max: 3 });
      expect(got.length).toBeLessThanOrEqual(1);
      leases.push(...got.map((l) => ({ w, l })));
    }
    expect(leases).toHaveLength(3);
    expect(new Set(leases.map(({ l }) => l.taskId)).size).toBe(3);

    const [a, b, cheat] = workers.map((w) => leases.find((x) => x.w === w)!);
    const forged = Buffer.from("1 1\n");
    await cheat!.w.client.worker.report.mutate({
      machineId: cheat!.w.machineId, leaseId: cheat!.l.leaseId, exitCode: 0, stdout: forged.toString("base64"), stderr: "",
      outputHash: createHash("sha256").update(forged).digest("hex"), elapsedMs: 1000,
    });
    await a!.w.client.worker.report.mutate(await honestReport(a!.w, a!.l));
    expect((await consumer.jobs.get.query({ jobId })).status).not.toBe("completed"); // one against one: no majority yet
    await b!.w.client.worker.report.mutate(await honestReport(b!.w, b!.l));

    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(Math.abs((job.result as { pi: number }).pi - Math.PI)).toBeLessThan(0.05);
    const db = market.manager.services.db;
    expect(await db.ledgerEntry.count({ where: { jobId, kind: "payment" } })).toBe(2);
    expect((await cheat!.w.owner.ledger.statement.query()).producerBalance).toBe(0);
    expect((await a!.w.owner.ledger.statement.query()).producerBalance).toBeCloseTo(0.01);
    const reputations = await db.machine.findMany({ select: { name: true, reputation: true } });
    expect(reputations.find((m) => m.name === "cheat")!.reputation).toBeLessThan(1);
    expect(reputations.find((m) => m.name === "honest-a")!.reputation).toBe(1);
  });
});
