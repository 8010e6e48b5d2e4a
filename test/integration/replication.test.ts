import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { runTask } from "../../apps/worker-runtime/src/sandbox.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// Verification by quorum: copies of a task run on different machines; the result is accepted
// when a majority of output hashes agree, by a margin of two accounts when copies disagree; a
// machine that disagrees is not paid, its account is recorded as caught forging and forfeits what
// the job paid it.

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

type Leased = Awaited<ReturnType<Worker["worker"]["lease"]["mutate"]>>["leases"][number];
const verifiedPi = (name: string, taskCount: number, samplesPerTask: number) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask }, taskCount },
  benefit: { kind: "constant" as const, value: 20 },
  replicas: 3,
});

describe("replicated tasks", () => {
  it("accepts the majority's output once it leads by two, pays only the machines that agree, and records the cheat as caught forging", async () => {
    const consumer = await market.signUp("buyer@example.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate(verifiedPi("verified pi", 1, 100_000));
    expect(decision.outcome).toBe("admitted");

    // Each machine gets one copy at most, however many it asks for.
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
    const honest = await honestReport(a!.w, a!.l);
    await a!.w.client.worker.report.mutate(honest);
    expect((await consumer.jobs.get.query({ jobId })).status).not.toBe("completed"); // one against one: no majority yet
    await b!.w.client.worker.report.mutate(await honestReport(b!.w, b!.l));
    // Two against one account with standing: a contest is settled on a margin of two, so one more copy.
    expect((await consumer.jobs.get.query({ jobId })).status).not.toBe("completed");
    const owner = await market.signUp("honest-c@example.test", ["producer"]);
    const client = market.tokenClient((await owner.account.tokens.create.mutate({ name: "honest-c" })).token);
    const { machineId } = await client.worker.register.mutate({ name: "honest-c", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });
    const c = { client, machineId, owner };
    try {
      for (let i = 0; i < 50 && (await consumer.jobs.get.query({ jobId })).status !== "completed"; i++) {
        for (const l of (await client.worker.lease.mutate({ machineId, max: 1 })).leases) await client.worker.report.mutate(await honestReport(c, l));
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await client.worker.depart.mutate({ machineId });
    }

    const job = await consumer.jobs.get.query({ jobId });
    expect(job.status).toBe("completed");
    expect(Math.abs((job.result as { pi: number }).pi - Math.PI)).toBeLessThan(0.05);
    // The job's one task has one output, the majority's: not one row per copy, and not the cheat's.
    const outputs = await consumer.jobs.outputs.query({ jobId });
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatchObject({ index: 0, stdoutText: Buffer.from(honest.stdout, "base64").toString("utf8") });
    const db = market.manager.services.db;
    expect(await db.ledgerEntry.count({ where: { jobId, kind: "payment" } })).toBe(3);
    expect((await cheat!.w.owner.ledger.statement.query()).producerBalance).toBe(0);
    // The piece rate its lease carried, not the second it reported.
    expect((await a!.w.owner.ledger.statement.query()).producerBalance).toBeCloseTo(Number(a!.l.pieceRateMicro) / 1e6, 6);
    const standing = await db.machine.findMany({ select: { name: true, owner: { select: { standing: true } } } });
    expect(standing.find((m) => m.name === "cheat")!.owner.standing).toMatchObject({ forgeries: 1, disagreements: 1 });
    expect(standing.find((m) => m.name === "honest-a")!.owner.standing).toMatchObject({ verified: 1, forgeries: 0 });
  });

  it("shows one output per task, the quorum's, and none before a quorum is reached", async () => {
    const consumer = await market.signUp("pager@example.test", ["consumer"]);
    const { jobId, decision } = await consumer.jobs.submit.mutate(verifiedPi("three tasks, three copies", 3, 20_000));
    expect(decision.outcome).toBe("admitted");
    const [first, second] = workers;
    const runAll = async (w: (typeof workers)[number]) => {
      const { leases } = await w.client.worker.lease.mutate({ machineId: w.machineId, max: 3 });
      expect(leases).toHaveLength(3);
      const outs = new Map<string, string>();
      for (const l of leases) {
        const report = await honestReport(w, l);
        await w.client.worker.report.mutate(report);
        outs.set(l.args.join(" "), Buffer.from(report.stdout, "base64").toString("utf8"));
      }
      return outs;
    };

    // One copy of each task has run: no task has a quorum of 2 yet, so there is nothing to show.
    await runAll(first!);
    expect(await consumer.jobs.outputs.query({ jobId })).toEqual([]);
    const honest = await runAll(second!);
    expect((await consumer.jobs.get.query({ jobId })).status).toBe("completed");

    const all = await consumer.jobs.outputs.query({ jobId });
    expect(all.map((o) => o.index)).toEqual([0, 1, 2]);
    for (const o of all) expect(o.stdoutText).toBe(honest.get(o.args.join(" ")));
    expect((await consumer.jobs.outputs.query({ jobId, limit: 2 })).map((o) => o.index)).toEqual([0, 1]);
    expect((await consumer.jobs.outputs.query({ jobId, fromIndex: 2 })).map((o) => o.index)).toEqual([2]);
  });
});
