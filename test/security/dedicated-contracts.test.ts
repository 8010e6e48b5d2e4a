import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodePool } from "../../apps/worker-runtime/src/node/pool.ts";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import { runProducer, type ProducerEvent } from "../../apps/worker-runtime/src/producer.ts";
import { PROBE_JOB_ID } from "../../apps/market-manager/src/resources/probes.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";

// Dedicated contracts pay for capacity that is really there. The attacks, as they were made
// against a fresh market: a producer offers a dedicated machine that only heartbeats, to be paid
// its contract for nothing; and because an idle dedicated machine costs the market nothing more,
// a victim's job is placed on it and waits there, unleased, until the contract ends.

const LEASE_TIMEOUT_MS = 2000;
let market: TestMarket;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
const pool = createNodePool({ slots: 2 });
const running: { stop: AbortController; done: Promise<unknown> }[] = [];

const base = { speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test" };
const dedicated = (name: string, contractPrice: number, seconds: number) => ({ ...base, name, kind: "dedicated" as const, slots: 2, pricePerSecond: 0, contractPrice, departsAt: Date.now() + seconds * 1000 });
const pi = (name: string, taskCount: number) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 20_000 }, taskCount },
  benefit: { kind: "constant" as const, value: 50 },
});

/** A producer's real worker loop (its work stream, its sandbox) on a machine with this profile. */
function worker(token: string, machine: Parameters<typeof runProducer>[0]["machine"], events: ProducerEvent[] = []) {
  const stop = new AbortController();
  const done = runProducer({ api: createTrpcApi(market.url, token), executor: pool, machine, slots: 2, signal: stop.signal, onEvent: (e) => events.push(e), idleBackoff: { minMs: 100, maxMs: 500 } });
  running.push({ stop, done });
  return { stop: () => (stop.abort(), done), events };
}

async function producerToken(email: string) {
  const { producer } = await market.signUpProducer(email);
  return { producer, token: (await producer.account.tokens.create.mutate({ name: "worker" })).token };
}

const machineNamed = async (name: string) => waitFor(`machine ${name}`, async () => [...market.manager.services.market.state.machines.values()].find((m) => m.name === name), 10_000);
const completed = (jobId: string) =>
  waitFor("the job to complete", async () => {
    const j = await consumer.jobs.get.query({ jobId });
    if (j.status === "failed") throw new Error("the job failed");
    return j.status === "completed" ? j : undefined;
  }, 40_000);
const ranOn = async (jobId: string) =>
  new Set((await market.manager.services.db.result.findMany({ where: { lease: { task: { jobId } }, accepted: true }, select: { lease: { select: { machineId: true } } } })).map((r) => r.lease.machineId));

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: String(LEASE_TIMEOUT_MS) });
  consumer = await market.signUp("victim@example.test", ["consumer"]);
});
afterAll(async () => {
  for (const r of running) r.stop.abort();
  await Promise.allSettled(running.map((r) => r.done));
  await pool.close();
  await market?.stop();
});

describe("a dedicated machine that only heartbeats", () => {
  it("earns nothing, and the victim's job placed on it completes elsewhere", async () => {
    // An honest opportunistic machine is in the market, running the real worker.
    const honest = await producerToken("honest@example.test");
    worker(honest.token, { ...base, name: "honest", kind: "opportunistic", pricePerSecond: 0.001 });
    const honestMachine = await machineNamed("honest");

    // The attacker's dedicated machine: accepted, and then it only heartbeats.
    const { producer: attacker, worker: attackerWorker } = await market.signUpProducer("idle@example.test");
    const { machineId, offer } = await attackerWorker.worker.register.mutate(dedicated("idle", 0.1, 60));
    expect(offer?.[0]?.code).toBe("offer-accepted");
    const beat = setInterval(() => void attackerWorker.worker.heartbeat.mutate({ machineId, leaseIds: [] }).catch(() => {}), 300);
    try {
      const { jobId, decision } = await consumer.jobs.submit.mutate(pi("victim", 4));
      expect(decision.outcome).toBe("admitted");
      // The idle dedicated machine costs the market nothing more: the victim's work goes there first.
      const live = market.manager.services.market.state.machines.get(machineId)!;
      const queuedOnAttacker = live.queue.length;
      expect(queuedOnAttacker).toBeGreaterThan(0);

      // Unleased within the lease timeout, its tasks go elsewhere, and the job completes there.
      const job = await completed(jobId);
      expect(job.tasksDone).toBe(4);
      expect(await ranOn(jobId)).toEqual(new Set([honestMachine.id]));
      // The machine missed: it is offered no more work until it proves itself.
      expect(live.strayedSince).toBeDefined();
      const { jobId: second } = await consumer.jobs.submit.mutate(pi("victim again", 2));
      expect(live.queue.length).toBe(0);
      await completed(second);

      // Heartbeating all along, past at least one probe it never answered.
      await waitFor("a probe to go unanswered", async () => (live.nextProbeAt !== undefined && live.probe === undefined && live.strayedSince !== undefined && Date.now() - live.contractStartAt! > 3 * LEASE_TIMEOUT_MS) || undefined, 30_000);
      expect(Date.now() - market.manager.services.market.state.machines.get(machineId)!.lastHeartbeatAt).toBeLessThan(LEASE_TIMEOUT_MS);
    } finally {
      clearInterval(beat);
    }
    await attackerWorker.worker.depart.mutate({ machineId });
    expect((await attacker.ledger.statement.query()).producerBalance).toBe(0);
    const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: machineId } });
    expect(row.contractPaidMicro).toBe(0n);
  });
});

describe("a dedicated machine that answers its probes and leases its work", () => {
  it("runs the work placed on it and is paid for the time it proved", async () => {
    const { producer, token } = await producerToken("rack@example.test");
    const events: ProducerEvent[] = [];
    const contractSeconds = 40;
    const price = 0.05;
    const w = worker(token, dedicated("rack", price, contractSeconds), events);
    const live = await machineNamed("rack");
    const { jobId } = await consumer.jobs.submit.mutate(pi("on the rack", 2));
    await completed(jobId);
    expect(await ranOn(jobId)).toContain(live.id);
    // Proved for a while, by its work and by the probes it answered when idle.
    await waitFor("probes answered", async () => (events.filter((e) => e.type === "leased" && e.leases.some((l) => l.jobId === PROBE_JOB_ID)).length >= 2 || undefined), 40_000);
    await waitFor("six seconds proved", async () => (live.proof!.provenUntil - live.contractStartAt! >= 6000 || undefined), 40_000);
    expect(live.strayedSince).toBeUndefined();
    const provedBefore = live.proof!.provenUntil - live.contractStartAt!;
    await w.stop();
    const departedAt = Date.now();
    const share = (ms: number) => (price * ms) / (live.departsAt! - live.contractStartAt!);
    const paid = (await producer.ledger.statement.query()).producerBalance;
    // Paid for the time it proved up to its departure, and never for more than it was there.
    expect(paid).toBeGreaterThanOrEqual(share(provedBefore) - 1e-6);
    expect(paid).toBeLessThanOrEqual(share(departedAt - live.contractStartAt!) + 1e-6);
    // Its pieces for the job's tasks are paid on top (from the job's escrow), so the contract's own payments are read.
    const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: live.id } });
    expect(Number(row.contractPaidMicro) / 1e6).toBeGreaterThanOrEqual(share(provedBefore) - 1e-6);
  });
});
