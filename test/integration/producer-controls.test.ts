import { createHash } from "node:crypto";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { liveMachineFromRow } from "../../apps/market-manager/src/resources/machines.ts";

// A producer's controls against a real market: a paused machine stays in the market but the
// engine plans nothing on it and it can lease nothing, and it gets work again once resumed;
// leased tasks finish or go back at once, as the producer chose; a CPU limit and a memory cap
// change the capacity the engine plans on.

let market: TestMarket;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let producer: Awaited<ReturnType<TestMarket["signUp"]>>;
let worker: ReturnType<TestMarket["tokenClient"]>;

const MACHINE = { kind: "opportunistic" as const, slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "test" };

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  ({ producer, worker } = await market.signUpProducer("seller@example.test"));
});
afterAll(() => market?.stop());

const submit = (name: string, taskCount = 2) =>
  consumer.jobs.submit.mutate({
    name,
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1_000 }, taskCount },
    benefit: { kind: "constant", value: 100 },
  });

async function leaseWithin(machineId: string, ms: number) {
  const until = Date.now() + ms;
  for (;;) {
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 1 });
    if (leases.length || Date.now() > until) return leases;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const engineProfile = (machineId: string) => {
  const state = (market.manager.services.market.engine as unknown as { state: { machine(id: string, now: number): { profile: Record<string, unknown> } | undefined } }).state;
  return state.machine(machineId, Date.now() / 1000)?.profile;
};

describe("producer controls", () => {
  it("a paused machine is offered no work while a job waits, and gets it once resumed", async () => {
    const { machineId } = await worker.worker.register.mutate({ ...MACHINE, name: "paused-at-start", controls: { paused: true } });
    expect(engineProfile(machineId)).toMatchObject({ available: false });
    const { jobId, decision } = await submit("waits for a paused machine");
    // The only machine is switched off: the engine places nothing on it.
    expect(decision.outcome).toBe("delayed");
    expect(await leaseWithin(machineId, 1_500)).toEqual([]);
    expect((await producer.machines.list.query()).find((m) => m.id === machineId)).toMatchObject({ offering: false, queued: 0, controls: { paused: true } });

    // Resumed from the page (or any API call with the producer's session or token).
    await producer.machines.setControls.mutate({ machineId, controls: { paused: false } });
    expect(engineProfile(machineId)).toMatchObject({ available: true });
    const leases = await leaseWithin(machineId, 10_000);
    expect(leases.map((l) => l.jobId)).toEqual([jobId]);
    // Its heartbeat carries the controls the market keeps, so a worker hears a change made on the page.
    expect(await worker.worker.heartbeat.mutate({ machineId, leaseIds: [leases[0]!.leaseId] })).toMatchObject({ controls: { paused: false } });
    await worker.worker.depart.mutate({ machineId });
  });

  it("hands leased tasks back at once, or lets them finish, as the producer chose", async () => {
    const { machineId } = await worker.worker.register.mutate({ ...MACHINE, name: "hands-back" });
    await submit("hand back", 2);
    const [lease] = await leaseWithin(machineId, 10_000);
    expect(lease).toBeDefined();
    const jobId = lease!.jobId;
    const attempts = async () => (await market.manager.services.db.task.findUniqueOrThrow({ where: { id: lease!.taskId } })).attempts;
    const leasedAttempts = await attempts();

    // "Hand them back now": the lease ends, the worker hears it at its next heartbeat, and the task is waiting again.
    await worker.worker.offer.mutate({ machineId, available: false, controls: { handBack: "now" } });
    const beat = await worker.worker.heartbeat.mutate({ machineId, leaseIds: [lease!.leaseId] });
    expect(beat.expiredLeaseIds).toEqual([lease!.leaseId]);
    expect((await consumer.jobs.get.query({ jobId })).tasks.leased).toBe(0);
    // Given back is not a failed try: the task's attempts are as before the lease.
    expect(await attempts()).toBe(leasedAttempts - 1);
    expect(await leaseWithin(machineId, 1_000)).toEqual([]);

    // "Let them finish": back on, lease, switch off again; the lease stays current and its report is taken.
    await worker.worker.offer.mutate({ machineId, available: true, controls: { handBack: "finish" } });
    const [second] = await leaseWithin(machineId, 10_000);
    expect(second).toBeDefined();
    await worker.worker.offer.mutate({ machineId, available: false });
    expect((await worker.worker.heartbeat.mutate({ machineId, leaseIds: [second!.leaseId] })).expiredLeaseIds).toEqual([]);
    expect(await leaseWithin(machineId, 1_000)).toEqual([]);
    await worker.worker.depart.mutate({ machineId });
  });

  it("plans on the capacity a CPU limit and a memory cap leave, and refuses bad controls naming the limit", async () => {
    const { machineId } = await worker.worker.register.mutate({ ...MACHINE, speed: 2, name: "limited", controls: { cpuLimit: 50, maxTaskMemoryMb: 128 } });
    expect(engineProfile(machineId)).toMatchObject({ available: true, speed: 1, memoryPerSlotMb: 128 });
    const bad = await refusal(producer.machines.setControls.mutate({ machineId, controls: { cpuLimit: 0, schedule: "Mon-Fry 18:00-08:00" } }));
    expect(bad.message).toContain("The CPU limit is at least 1%.");
    expect(bad.message).toContain('"Fry" is not a day');
    expect((await producer.machines.list.query()).find((m) => m.id === machineId)?.controls).toMatchObject({ cpuLimit: 50, schedule: null });
    // Someone else's machine is not theirs to pause.
    const other = await market.signUp("other@example.test", ["producer"]);
    expect((await refusal(other.machines.setControls.mutate({ machineId, controls: { paused: true } }))).code).toBe("not-your-machine");
    await worker.worker.depart.mutate({ machineId });
  });

  it("a lowered memory cap sends queued tasks that no longer fit to another machine", async () => {
    const a = await worker.worker.register.mutate({ ...MACHINE, name: "roomy-then-capped" });
    const { token } = await consumer.account.tokens.create.mutate({ name: "upload", scopes: ["consume"] });
    const cat = wat(CAT_WAT);
    expect((await fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: new Uint8Array(cat) })).ok).toBe(true);
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "needs 64 MB",
      benefit: { kind: "constant", value: 100 },
      source: { kind: "module", moduleHash: createHash("sha256").update(cat).digest("hex"), workPerTask: 1, limits: { memoryMb: 64, wallSeconds: 60 }, tasks: [{}, {}] },
    });
    expect(decision.outcome).toBe("admitted");
    // Where this job's tasks wait, as the database records it.
    const queuedOn = async (machineId: string) => (await market.manager.services.db.task.findMany({ where: { jobId, machineId, status: "queued" } })).length;
    expect(await queuedOn(a.machineId)).toBe(2);
    const b = await worker.worker.register.mutate({ ...MACHINE, name: "roomy" });
    await producer.machines.setControls.mutate({ machineId: a.machineId, controls: { maxTaskMemoryMb: 32 } });
    expect(engineProfile(a.machineId)).toMatchObject({ available: true, memoryPerSlotMb: 32 });
    expect(await queuedOn(a.machineId)).toBe(0);
    expect(await queuedOn(b.machineId)).toBe(2);
    await consumer.jobs.cancel.mutate({ jobId });
    for (const m of [a, b]) await worker.worker.depart.mutate({ machineId: m.machineId });
  });

  it("keeps the controls on the machine's record, from which a restarted market rebuilds them", async () => {
    const { machineId } = await worker.worker.register.mutate({ ...MACHINE, name: "kept", controls: { paused: true, schedule: "Mon-Fri 18:00-08:00" } });
    const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: machineId }, include: { owner: { select: { emailVerified: true } } } });
    expect(row.controls).toMatchObject({ paused: true, schedule: "Mon-Fri 18:00-08:00" });
    expect(liveMachineFromRow(row).controls).toMatchObject({ paused: true, schedule: "Mon-Fri 18:00-08:00", cpuLimit: 100 });
    await worker.worker.depart.mutate({ machineId });
  });
});
