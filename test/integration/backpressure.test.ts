import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";
import { mutation } from "../security/http.ts";
import type { Market } from "../../apps/market-manager/src/market/market.ts";

// A busy market stays honest with its callers: past a bounded queue it says so at once (503 with
// Retry-After) instead of answering minutes later; a call whose client has gone is not run; and
// joining the market, heartbeats and /healthz never wait behind the market's queue.

let market: TestMarket;
let live: Market;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let consumer: Client;
let token: string;

const profile = (name: string) => ({
  name, kind: "opportunistic" as const, slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test",
});
const pi = (name: string) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 20_000 }, taskCount: 1 },
  benefit: { kind: "constant" as const, value: 50 },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Holds the market's lock, as a long step would, until the returned function is called. */
function holdLock(): () => Promise<void> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const done = live.serial(() => held);
  return async () => {
    release();
    await done;
  };
}

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  live = market.manager.services.market;
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  token = (await producer.account.tokens.create.mutate({ name: "fleet" })).token;
});
afterAll(async () => {
  await market?.stop();
});

describe("a busy market", () => {
  it("answers 503 with Retry-After past its bounded queue, and serves the same call once there is room", async () => {
    const api = createTrpcApi(market.url, token);
    const { machineId } = await api.register(profile("patient"));
    // Work waits on the machine, so its lease needs the market's turn (one that could get nothing is answered at once).
    const { jobId } = await consumer.jobs.submit.mutate(pi("waits behind the queue"));
    await waitFor("the task on the machine", async () => (live.state.machines.get(machineId)?.queue.length ?? 0) > 0 || undefined, 10_000);
    const auth = { authorization: `Bearer ${token}` };
    const bound = live.maxQueuedSteps;
    const release = holdLock();
    try {
      live.maxQueuedSteps = 1; // the step holding the lock fills the queue
      const refused = await mutation(market.url, "worker.lease", { machineId, max: 1 }, auth);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(refused.json.error.data.reason).toEqual({ code: "market-busy", limit: "queued-calls", max: 1, retryAfterSeconds: 1 });
      // Heartbeats never queue: the machine stays alive however long the queue.
      expect((await mutation(market.url, "worker.heartbeat", { machineId, leaseIds: [] }, auth)).status).toBe(200);
    } finally {
      live.maxQueuedSteps = bound;
      await release();
    }
    const served = await mutation(market.url, "worker.lease", { machineId, max: 1 }, auth);
    expect(served.status).toBe(200);
    expect(served.json.result.data.leases.map((l: { jobId: string }) => l.jobId)).toEqual([jobId]);
    await consumer.jobs.cancel.mutate({ jobId });
    await api.depart({ machineId });
  });

  it("answers a lease that can get nothing at once, however long the queue, and still hears the machine in it", async () => {
    const api = createTrpcApi(market.url, token);
    const { machineId } = await api.register(profile("early"));
    const before = live.state.machines.get(machineId)!.lastHeartbeatAt;
    await sleep(20);
    const release = holdLock();
    const bound = live.maxQueuedSteps;
    try {
      live.maxQueuedSteps = 1;
      const started = performance.now();
      const answer = await mutation(market.url, "worker.lease", { machineId, max: 1 }, { authorization: `Bearer ${token}` });
      expect(answer.status).toBe(200);
      expect(answer.json.result.data).toEqual({ leases: [] });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(live.state.machines.get(machineId)!.lastHeartbeatAt).toBeGreaterThan(before);
    } finally {
      live.maxQueuedSteps = bound;
      await release();
    }
    await api.depart({ machineId });
  });

  it("does not run a lease whose worker went away while it waited: the task stays for the next lease", async () => {
    const api = createTrpcApi(market.url, token);
    const { machineId } = await api.register(profile("forgetful"));
    const { jobId } = await consumer.jobs.submit.mutate(pi("waits for a lease"));
    await waitFor("the task on the machine", async () => (live.state.machines.get(machineId)?.queue.length ?? 0) > 0 || undefined, 10_000);
    const release = holdLock();
    const gone = new AbortController();
    try {
      const call = fetch(`${market.url}/api/trpc/worker.lease`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ machineId, max: 1 }),
        signal: gone.signal,
      }).catch(() => "gone");
      await sleep(300); // the call reaches the market and waits for its turn
      gone.abort();
      expect(await call).toBe("gone");
      await sleep(300); // the market hears the connection close
    } finally {
      await release();
    }
    // Had the abandoned call run, the task would sit under a lease nobody holds until it expired.
    const { leases } = await api.lease({ machineId, max: 1 });
    expect(leases.map((l) => l.jobId)).toEqual([jobId]);
    await consumer.jobs.cancel.mutate({ jobId });
    await api.depart({ machineId });
  });

  it("lets a machine join, and answers /healthz, while the market's queue is held", async () => {
    const release = holdLock();
    let machineId = "";
    try {
      const started = performance.now();
      const health = await fetch(`${market.url}/healthz`);
      expect(health.status).toBe(200);
      ({ machineId } = await createTrpcApi(market.url, token).register(profile("newcomer")));
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(live.state.machines.has(machineId)).toBe(true);
    } finally {
      await release();
    }
    await createTrpcApi(market.url, token).depart({ machineId });
  });

  it("serves a fleet of machines on one token, and refuses that token at the next call once it is revoked", async () => {
    const producer = await market.signUp("fleet-owner@example.test", ["producer"]);
    const { id, token: own } = await producer.account.tokens.create.mutate({ name: "fleet" });
    const api = createTrpcApi(market.url, own);
    const machines = await Promise.all(Array.from({ length: 20 }, (_, i) => api.register(profile(`fleet ${i}`))));
    const beats = await Promise.all(machines.map(({ machineId }) => api.heartbeat({ machineId, leaseIds: [] })));
    expect(beats.every((b) => b.expiredLeaseIds.length === 0)).toBe(true);
    await producer.account.tokens.revoke.mutate({ id });
    const refused = await mutation(market.url, "worker.heartbeat", { machineId: machines[0]!.machineId, leaseIds: [] }, { authorization: `Bearer ${own}` });
    expect(refused.status).toBe(401);
  });

  it("answers a heartbeat the same way batched or not, and refuses a bad one with the API's own reasons", async () => {
    const api = createTrpcApi(market.url, token);
    const { machineId } = await api.register(profile("beating"));
    const auth = { authorization: `Bearer ${token}` };
    const unknownLease = "00000000-0000-4000-8000-000000000000";
    // The worker's own client (a batch of one) parses the answer against the protocol's schema.
    expect(await api.heartbeat({ machineId, leaseIds: [unknownLease] })).toMatchObject({ expiredLeaseIds: [unknownLease] });
    const single = await mutation(market.url, "worker.heartbeat", { machineId, leaseIds: [] }, auth);
    expect(single.status).toBe(200);
    expect(single.json.result.data).toMatchObject({ expiredLeaseIds: [], controls: { paused: false } });

    expect((await mutation(market.url, "worker.heartbeat", { machineId, leaseIds: [] })).status).toBe(401);
    const bad = await mutation(market.url, "worker.heartbeat", { machineId, leaseIds: "all" }, auth);
    expect(bad.status).toBe(400);
    const buyerToken = (await consumer.account.tokens.create.mutate({ name: "script", scopes: ["consume"] })).token;
    const scoped = await mutation(market.url, "worker.heartbeat", { machineId, leaseIds: [] }, { authorization: `Bearer ${buyerToken}` });
    expect(scoped.status).toBe(403);

    await api.depart({ machineId });
    const gone = await mutation(market.url, "worker.heartbeat", { machineId, leaseIds: [] }, auth);
    expect(gone.status).toBe(409);
    expect(gone.json.error.data.reason).toEqual({ code: "machine-departed", machineId });
  });
});
