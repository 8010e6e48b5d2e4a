import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkOffer } from "../../apps/worker-runtime/src/api.ts";
import { createNodePool } from "../../apps/worker-runtime/src/node/pool.ts";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import { runProducer, refusalOf, type ProducerEvent } from "../../apps/worker-runtime/src/producer.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";

// The market pushes what used to be polled, over server-sent events: a worker hears that there
// is work for its machine (live.work) and an admin's dashboard gets the overview whenever the
// market changes (live.market). Each stream is refused exactly as the polled call would be.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let consumer: Client;
let admin: Client;
let producerToken: string;
let otherToken: string;
const pool = createNodePool({ slots: 1 });

const profile = (name: string) => ({
  name, kind: "opportunistic" as const, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test",
});
const pi = (name: string, taskCount = 1) => ({
  name,
  source: { kind: "example" as const, example: "montecarlo" as const, params: { samplesPerTask: 20_000 }, taskCount },
  benefit: { kind: "constant" as const, value: 50 },
});

/** Opens a machine's work stream and records what it hears. */
function listen(api: ReturnType<typeof createTrpcApi>, machineId: string) {
  const heard = { offers: [] as WorkOffer[], states: [] as string[], ended: undefined as unknown };
  const close = api.watchWork!({ machineId }, {
    offer: (o) => heard.offers.push(o),
    state: (s) => heard.states.push(s),
    end: (e) => (heard.ended = e ?? "completed"),
  });
  return { heard, close };
}

/** Open live streams, as the admin's overview counts them. */
const streams = async () => (await admin.admin.overview.query()).streams;

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  producerToken = (await producer.account.tokens.create.mutate({ name: "fleet" })).token;
  const other = await market.signUp("other@example.test", ["producer"]);
  otherToken = (await other.account.tokens.create.mutate({ name: "theirs" })).token;
  const { email, password } = market.manager.admin!;
  admin = await market.signIn(email, password);
});
afterAll(async () => {
  await pool.close();
  await market?.stop();
});

describe("a worker's work stream (live.work)", () => {
  it("says nothing while there is no work, then offers the task of a new job on its machine at once", async () => {
    const api = createTrpcApi(market.url, producerToken);
    const { machineId } = await api.register({ ...profile("listener"), slots: 1 });
    const { heard, close } = listen(api, machineId);
    try {
      await waitFor("the stream to connect", async () => heard.states.includes("live") || undefined, 10_000);
      expect(heard.offers).toEqual([]);

      const { jobId } = await consumer.jobs.submit.mutate(pi("pushed"));
      await waitFor("an offer", async () => heard.offers[0], 10_000);
      expect(heard.offers[0]).toEqual({ machineId, available: 1 });

      // The offer was true: a lease now gets the task.
      const { leases } = await api.lease({ machineId, max: 1 });
      expect(leases).toHaveLength(1);
      expect(heard.ended).toBeUndefined();
      await consumer.jobs.cancel.mutate({ jobId }); // so no later test's machine picks its task up
    } finally {
      close();
      await api.depart({ machineId });
    }
  });

  it("refuses a stream for someone else's machine, and one without credentials, with the reason", async () => {
    const mine = createTrpcApi(market.url, producerToken);
    const { machineId } = await mine.register({ ...profile("not theirs"), slots: 1 });
    try {
      const theirs = listen(createTrpcApi(market.url, otherToken), machineId);
      await waitFor("the refusal", async () => theirs.heard.ended, 10_000);
      theirs.close();
      expect(refusalOf(theirs.heard.ended)).toEqual({ code: "not-your-machine", machineId });
      expect(theirs.heard.offers).toEqual([]);

      const anonymous = listen(createTrpcApi(market.url, "not-a-token"), machineId);
      await waitFor("the refusal", async () => anonymous.heard.ended, 10_000);
      anonymous.close();
      expect(refusalOf(anonymous.heard.ended)?.code).toBe("UNAUTHORIZED");
      expect(anonymous.heard.offers).toEqual([]);
    } finally {
      await mine.depart({ machineId });
    }
  });

  it("wakes an idle worker for a new job long before its next poll, and lets go of the stream when it stops", async () => {
    const before = await streams();
    const events: ProducerEvent[] = [];
    const stop = new AbortController();
    // Polls a minute apart: only the stream can bring the task sooner.
    const running = runProducer({
      api: createTrpcApi(market.url, producerToken),
      executor: pool,
      machine: profile("sleeper"),
      slots: 1,
      signal: stop.signal,
      onEvent: (e) => events.push(e),
      idleBackoff: { minMs: 60_000, maxMs: 60_000, liveMs: 60_000 },
    });
    try {
      await waitFor("the stream", async () => events.some((e) => e.type === "stream" && e.state === "live") || undefined, 10_000);
      await waitFor("an idle wait", async () => events.some((e) => e.type === "idle") || undefined, 10_000);
      expect(events.find((e) => e.type === "idle")).toEqual({ type: "idle", waitMs: 60_000 });
      expect(await streams()).toBe(before + 1);

      const { jobId } = await consumer.jobs.submit.mutate(pi("wake up"));
      const job = await waitFor("the job to complete", async () => {
        const j = await consumer.jobs.get.query({ jobId });
        return j.status === "completed" ? j : undefined;
      }, 30_000);
      expect(job.tasksDone).toBe(1);
    } finally {
      stop.abort();
    }
    const summary = await running;
    expect(summary.reportsAccepted).toBe(1);
    await waitFor("the stream to be let go", async () => ((await streams()) === before ? true : undefined), 10_000);
  });
});

describe("leases made for a stream that closed before sending them", () => {
  it("go back to the market at its next tick, not after the lease timeout (10 minutes here)", async () => {
    const api = createTrpcApi(market.url, producerToken);
    const { machineId } = await api.register({ ...profile("gone quiet"), slots: 1 });
    const live = market.manager.services.market;
    // A stream that takes leases, whose connection drops before it writes anything.
    const closeStream = live.workRoutes.watch(machineId, () => {}, 1);
    let closed = false;
    try {
      const { jobId } = await consumer.jobs.submit.mutate(pi("never sent"));
      await waitFor("a lease made for the stream", async () => live.workRoutes.hasPushed(machineId) || undefined, 10_000);
      const [lease] = [...live.state.machines.get(machineId)!.leases];
      const taskId = live.state.leases.get(lease!)!.taskId;
      closeStream();
      closed = true;
      // Nobody holds the lease: its task is leased again within a few ticks.
      const again = await waitFor("the task leased again", async () => (await api.lease({ machineId, max: 1 })).leases[0], 8_000);
      expect(again.taskId).toBe(taskId);
      expect(again.leaseId).not.toBe(lease);
      await consumer.jobs.cancel.mutate({ jobId });
    } finally {
      if (!closed) closeStream();
      await api.depart({ machineId });
    }
  });
});

describe("the admin's live overview (live.market)", () => {
  it("sends the overview on connect and again when the market changes, to the admin only", async () => {
    const views: { id: string; jobs: number }[] = [];
    const subscription = admin.live.market.subscribe(undefined, {
      onData: (event) => views.push({ id: event.id, jobs: event.data.jobs.length }),
    });
    try {
      const first = await waitFor("the first view", async () => views[0], 10_000);
      await consumer.jobs.submit.mutate(pi("watched"));
      const next = await waitFor("a view with the new job", async () => views.find((v) => v.jobs === first.jobs + 1), 10_000);
      expect(next.id).not.toBe(first.id);
    } finally {
      subscription.unsubscribe();
    }

    let refused: unknown;
    const denied = consumer.live.market.subscribe(undefined, { onData: () => {}, onError: (e) => (refused = e) });
    await waitFor("the refusal", async () => refused, 10_000);
    denied.unsubscribe();
    expect(refusalOf(refused)?.code).toBe("FORBIDDEN");
  });
});
