import { afterAll, beforeAll, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { signUp, startTestMarket, type TestMarket } from "../support/market.ts";
import { runLease } from "../support/worker.ts";

// Accounts cost nothing: three producers who never confirmed an address (producing needs none)
// each register a machine; a victim's job asks for three copies of each task; two of them report
// the same forged output. Agreement among accounts without standing is no proof: nothing is
// accepted, nothing is served, and no forger is paid.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket();
});
afterAll(() => market?.stop());

async function freshProducer(name: string) {
  const account = await signUp(market.url, `${name}@example.test`, ["producer"]); // no confirmation
  const worker = market.tokenClient((await account.account.tokens.create.mutate({ name })).token);
  const { machineId } = await worker.worker.register.mutate({
    name, kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "test",
  });
  return { account, worker, machineId };
}

it("two fresh accounts agreeing on a forged output do not make a quorum", async () => {
  const sybils = [await freshProducer("sybil-1"), await freshProducer("sybil-2"), await freshProducer("sybil-3")];
  const consumer = await market.signUp("sybils-victim@example.test", ["consumer"]);
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name: "checked three times",
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 100_000 }, taskCount: 1 },
    benefit: { kind: "constant", value: 20 },
    replicas: 3,
  });
  expect(decision.outcome).toBe("admitted");

  const forged = Buffer.from("FORGED RESULT\n");
  for (const [i, s] of sybils.entries()) {
    const { leases } = await s.worker.worker.lease.mutate({ machineId: s.machineId, max: 1 });
    expect(leases).toHaveLength(1);
    const report =
      i < 2
        ? { machineId: s.machineId, leaseId: leases[0]!.leaseId, exitCode: 0, stdout: forged.toString("base64"), stderr: "", outputHash: createHash("sha256").update(forged).digest("hex"), elapsedMs: 100 }
        : await runLease(s.worker, s.machineId, leases[0]!);
    await s.worker.worker.report.mutate(report);
  }

  const job = await consumer.jobs.get.query({ jobId });
  expect(job.status).not.toBe("completed");
  expect(job.tasks.done).toBe(0);
  expect(await consumer.jobs.outputs.query({ jobId })).toEqual([]);
  for (const s of sybils.slice(0, 2)) expect((await s.account.ledger.statement.query()).producerBalance).toBe(0);
  // What each of them sees of its standing, and an honest confirmed producer's once a result of its is accepted.
  expect(await sybils[0]!.account.machines.standing.query()).toEqual({ confirmed: false, countsInQuorum: false, acceptedResults: 0, contractCeiling: 1, contractsOwed: 0 });
  const { producer, worker } = await market.signUpProducer("standing-honest@example.test");
  const { machineId } = await worker.worker.register.mutate({
    name: "honest", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.0001, userAgent: "test",
  });
  const { jobId: single } = await consumer.jobs.submit.mutate({
    name: "run once",
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 100_000 }, taskCount: 1 },
    benefit: { kind: "constant", value: 20 },
  });
  const { leases } = await worker.worker.lease.mutate({ machineId, max: 1 });
  expect(leases.map((l) => l.jobId)).toEqual([single]);
  await worker.worker.report.mutate(await runLease(worker, machineId, leases[0]!));
  expect(await producer.machines.standing.query()).toMatchObject({ confirmed: true, countsInQuorum: true, acceptedResults: 1, contractCeiling: 10.1 });
});
