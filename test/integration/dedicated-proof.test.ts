import { afterAll, beforeAll, expect, it } from "vitest";
import { refusal, signUp, startTestMarket, type TestMarket } from "../support/market.ts";
import { runLease } from "../support/worker.ts";

// A dedicated contract pays for capacity the machine proved, never for heartbeats: the attack of a
// machine that heartbeats, leases nothing and waits for its contract to pay out, against a real market.

let market: TestMarket;
beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "3000" });
});
afterAll(() => market?.stop());

const hardware = { memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, userAgent: "test", speed: 1, pricePerSecond: 0 };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Consumer = Awaited<ReturnType<TestMarket["signUp"]>>;
/** A small Monte Carlo job of `consumer`'s, admitted. */
async function submitPi(consumer: Consumer, name: string, taskCount: number) {
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name,
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 200_000 }, taskCount },
    benefit: { kind: "constant", value: 100 },
  });
  expect(decision.outcome).toBe("admitted");
  return jobId;
}

it("a dedicated machine that only heartbeats earns nothing, and the job placed on it completes elsewhere", async () => {
  const { producer: lessor, worker: idle } = await market.signUpProducer("idle-lessor@example.test");
  const { machineId: idleId, offer } = await idle.worker.register.mutate({ ...hardware, name: "idle", kind: "dedicated", slots: 4, contractPrice: 0.01, departsAt: Date.now() + 120_000 });
  expect(offer?.[0]?.code).toBe("offer-accepted");

  const consumer = await market.signUp("victim@example.test", ["consumer"]);
  const jobId = await submitPi(consumer, "victim", 4);
  const db = market.manager.services.db;
  // Its capacity is bought already, so the market places the job there.
  expect(await db.task.count({ where: { jobId, machineId: idleId } })).toBe(4);

  const { worker: honest } = await market.signUpProducer("honest@example.test");
  const { machineId: honestId } = await honest.worker.register.mutate({ ...hardware, name: "honest", kind: "opportunistic", slots: 2, pricePerSecond: 0.001 });

  // The idle machine heartbeats throughout, on a timer of its own as a worker does, and never
  // leases; the honest one runs what it gets.
  const beating = setInterval(() => void idle.worker.heartbeat.mutate({ machineId: idleId, leaseIds: [] }).catch(() => null), 300);
  let status = "";
  try {
    for (const until = Date.now() + 30_000; Date.now() < until && status !== "completed"; await pause(300)) {
      const { leases } = await honest.worker.lease.mutate({ machineId: honestId, max: 2 });
      for (const lease of leases) await honest.worker.report.mutate(await runLease(honest, honestId, lease));
      status = (await consumer.jobs.get.query({ jobId })).status;
    }
  } finally {
    clearInterval(beating);
  }
  expect(status).toBe("completed");
  // It missed (resources/presence.ts): offered no work until it proves it is there, and paid
  // nothing. On a busy host it may have been taken out of the market meanwhile, for what it missed.
  const left = market.manager.services.market.state.machines.get(idleId);
  if (left) expect(left.strayedSince).toBeDefined();
  else expect(["missed-leases", "missed-heartbeats"]).toContain((await db.machine.findUniqueOrThrow({ where: { id: idleId } })).departReason);
  expect(await db.task.count({ where: { jobId, machineId: idleId } })).toBe(0);
  expect((await lessor.ledger.statement.query()).producerBalance).toBe(0);
  if (left) await idle.worker.depart.mutate({ machineId: idleId });
  expect((await lessor.ledger.statement.query()).producerBalance).toBe(0);
});

it("a dedicated machine is paid for the time up to its last proof of presence (a lease, a result), and no more", async () => {
  const { producer: lessor, worker } = await market.signUpProducer("working-lessor@example.test");
  const CONTRACT = { price: 0.01, seconds: 60 };
  const registeredBy = Date.now();
  const { machineId } = await worker.worker.register.mutate({ ...hardware, name: "working", kind: "dedicated", slots: 4, contractPrice: CONTRACT.price, departsAt: Date.now() + CONTRACT.seconds * 1000 });
  // It heartbeats throughout, on a timer of its own as a worker does: on a busy host the pauses
  // below could otherwise outlast the market's patience and take it out.
  const beating = setInterval(() => void worker.worker.heartbeat.mutate({ machineId, leaseIds: [] }).catch(() => null), 300);
  let provenBy: number;
  try {
    const consumer = await market.signUp("buyer-of-dedicated@example.test", ["consumer"]);
    const jobId = await submitPi(consumer, "on the dedicated machine", 1);
    await pause(1500);
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 4 });
    expect(leases.map((l) => l.jobId)).toEqual([jobId]);
    expect(await worker.worker.report.mutate(await runLease(worker, machineId, leases[0]!))).toMatchObject({ accepted: true });
    provenBy = Date.now();
    // Heartbeats after the result add nothing.
    await pause(1500);
  } finally {
    clearInterval(beating);
  }
  await worker.worker.depart.mutate({ machineId });
  // A share of the contract for the time from registering to the result (at least the 1.5 s
  // pause), read on this host's clock around the market's: not the 1.5 s more it was heard.
  const paid = (await lessor.ledger.statement.query()).producerBalance;
  const share = (ms: number) => (CONTRACT.price * ms) / (CONTRACT.seconds * 1000);
  expect(paid).toBeGreaterThan(share(1500));
  expect(paid).toBeLessThanOrEqual(share(provenBy - registeredBy) + 1e-6);
});

it("a machine that takes a task and lets its lease lapse, again and again, is taken out and the task runs elsewhere", async () => {
  // Leases of these short tasks end after a second, so holding them past their time is quick to play.
  const live = market.manager.services.market;
  live.settings.terms = { ...live.settings.terms, leaseFloorSeconds: 1 };
  const { worker: hostage } = await market.signUpProducer("hostage@example.test");
  // The cheapest machine, so the market places the task back on it after each lapse.
  const { machineId: hostageId } = await hostage.worker.register.mutate({ ...hardware, name: "hostage", kind: "opportunistic", slots: 1, pricePerSecond: 0 });
  const consumer = await market.signUp("held-hostage@example.test", ["consumer"]);
  const jobId = await submitPi(consumer, "held", 1);
  const { worker: honest } = await market.signUpProducer("rescuer@example.test");
  const { machineId: honestId } = await honest.worker.register.mutate({ ...hardware, name: "rescuer", kind: "opportunistic", slots: 1, pricePerSecond: 0.001 });

  // The hostage heartbeats and takes whatever it is given, and never reports.
  let status = "";
  let held = 0;
  for (const until = Date.now() + 30_000; Date.now() < until && status !== "completed"; await pause(300)) {
    await hostage.worker.heartbeat.mutate({ machineId: hostageId, leaseIds: [] }).catch(() => null);
    held += (await hostage.worker.lease.mutate({ machineId: hostageId, max: 1 }).catch(() => ({ leases: [] }))).leases.length;
    const { leases } = await honest.worker.lease.mutate({ machineId: honestId, max: 1 });
    for (const lease of leases) await honest.worker.report.mutate(await runLease(honest, honestId, lease));
    status = (await consumer.jobs.get.query({ jobId })).status;
  }
  expect(status).toBe("completed");
  const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: hostageId } });
  expect({ status: row.status, departReason: row.departReason }).toEqual({ status: "departed", departReason: "missed-leases" });
  expect(held).toBeGreaterThanOrEqual(2);
}, 60_000);

it("what the market promises one account in contracts is bounded by its standing", async () => {
  const day = () => Date.now() + 86_400_000;
  const offer = (contractPrice: number) => ({ ...hardware, name: `lease-${contractPrice}`, kind: "dedicated" as const, slots: 64, contractPrice, departsAt: day() });
  // An account that never confirmed its address: a small ceiling.
  const fresh = await signUp(market.url, "fresh-lessor@example.test", ["producer"]);
  const freshWorker = market.tokenClient((await fresh.account.tokens.create.mutate({ name: "rack" })).token);
  expect(await refusal(freshWorker.worker.register.mutate(offer(5)))).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing", contractPrice: 5, ceiling: 1, promised: 0 } });
  // A confirmed one: more, and what its contracts still owe counts against it.
  const { worker } = await market.signUpProducer("confirmed-lessor@example.test");
  const { offer: accepted } = await worker.worker.register.mutate(offer(5));
  expect(accepted?.[0]?.code).toBe("offer-accepted");
  const second = await refusal(worker.worker.register.mutate(offer(6)));
  expect(second).toMatchObject({ code: "offer-refused", refusal: { code: "offer-over-standing", contractPrice: 6, ceiling: 10 } });
  expect((second.refusal as { promised: number }).promised).toBeGreaterThan(4.9);
});
