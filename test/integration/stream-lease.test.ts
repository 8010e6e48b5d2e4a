import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkOffer } from "../../apps/worker-runtime/src/api.ts";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import { refusalOf } from "../../apps/worker-runtime/src/producer.ts";
import { EMPTY_OUTPUT_HASH } from "../../apps/worker-runtime/src/sandbox.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";
import { moduleImporting } from "../support/wasm.ts";

// An idle worker that opens its work stream with `lease` is leased on the stream: the offer that
// tells it of a new job carries the lease, written before it is sent (by a small job's admission
// itself, else in the market's group commit), so the worker starts the task without asking. A worker holding a lease gets plain offers,
// and a lease sent on a stream that the worker never runs expires as any lease does.

const LEASE_TIMEOUT_MS = 2000;
let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let consumer: Client;
let token: string;

const profile = (name: string) => ({
  name, kind: "opportunistic" as const, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test",
});
/** One task that exits at once with no output: its result is the empty output's hash. */
const trivial = (name: string) => ({
  name,
  source: { kind: "upload" as const, moduleBase64: Buffer.from(moduleImporting("wasi_snapshot_preview1", "proc_exit")).toString("base64"), tasks: [{ args: [] }], workPerTask: 0.001, memoryMbPerTask: 1 },
  benefit: { kind: "constant" as const, value: 50 },
});

/** Opens a machine's work stream asking for leases on it, and records the offers. */
function listen(api: ReturnType<typeof createTrpcApi>, machineId: string, max: number) {
  const heard = { offers: [] as WorkOffer[], live: false, ended: undefined as unknown };
  const close = api.watchWork!({ machineId, lease: { max } }, {
    offer: (o) => heard.offers.push(o),
    state: (s) => (heard.live = s === "live"),
    end: (e) => (heard.ended = e ?? "completed"),
  });
  return { heard, close };
}

/**
 * A registered machine that heartbeats naming no lease (so a lease it is sent but never runs is
 * not renewed), with its work stream open asking for one lease at a time.
 */
async function idleMachine(name: string) {
  const api = createTrpcApi(market.url, token);
  const { machineId } = await api.register({ ...profile(name), slots: 1 });
  const beat = setInterval(() => void api.heartbeat({ machineId, leaseIds: [] }).catch(() => {}), 300);
  const { heard, close } = listen(api, machineId, 1);
  await waitFor("the stream to connect", async () => heard.live || undefined, 10_000);
  const done = async () => {
    clearInterval(beat);
    close();
    await api.depart({ machineId });
  };
  return { api, machineId, heard, done };
}

const emptyReport = (machineId: string, leaseId: string) => ({ machineId, leaseId, exitCode: 0, stdout: "", stderr: "", outputHash: EMPTY_OUTPUT_HASH, elapsedMs: 1 });

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: String(LEASE_TIMEOUT_MS) });
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  token = (await producer.account.tokens.create.mutate({ name: "fleet" })).token;
});
afterAll(async () => {
  await market?.stop();
});

describe("leases on the work stream", () => {
  it("sends an idle worker the new job's lease with the offer, durable, and only plain offers while it holds one", async () => {
    const { api, machineId, heard, done } = await idleMachine("idle");
    try {
      const first = await consumer.jobs.submit.mutate(trivial("pushed"));
      const offer = await waitFor("an offer", async () => heard.offers[0], 10_000);
      expect(offer).toMatchObject({ machineId, available: 0 });
      expect(offer.leases).toHaveLength(1);
      const lease = offer.leases![0]!;
      expect(lease.jobId).toBe(first.jobId);
      // Written before it was sent: the lease row is active and its task leased to this machine.
      const row = await market.manager.services.db.lease.findUniqueOrThrow({ where: { id: lease.leaseId }, include: { task: true } });
      expect(row).toMatchObject({ status: "active", machineId, task: { status: "leased", machineId } });
      // Leased by the admission's own statement: issued at the decision's moment, the job running.
      const job = await market.manager.services.db.job.findUniqueOrThrow({ where: { id: first.jobId } });
      expect(job.status).toBe("running");
      expect(row.issuedAt.getTime()).toBe(job.decidedAt!.getTime());

      // Holding it, the machine is told of the next job but not leased it on the stream.
      const second = await consumer.jobs.submit.mutate(trivial("offered"));
      const plain = await waitFor("a second offer", async () => heard.offers[1], 10_000);
      expect(plain).toEqual({ machineId, available: 1 });

      // The pushed lease is the worker's as any other: its result is accepted under it.
      const answer = await api.report(emptyReport(machineId, lease.leaseId));
      expect(answer.accepted).toBe(true);
      await consumer.jobs.cancel.mutate({ jobId: second.jobId });
    } finally {
      await done();
    }
  });

  it("lets a lease sent on the stream expire when the worker never runs it, and places its task again", async () => {
    // Alive, but it never runs the lease it is sent on the stream: the lease ends at its time.
    const { api, machineId, heard, done } = await idleMachine("forgetful");
    const live = market.manager.services.market;
    const terms = live.settings.terms;
    live.settings.terms = { ...terms, leaseFloorSeconds: 1 };
    try {
      const { jobId } = await consumer.jobs.submit.mutate(trivial("forgotten"));
      const lease = (await waitFor("a lease on the stream", async () => heard.offers.find((o) => o.leases?.length), 10_000)).leases![0]!;
      const db = market.manager.services.db;
      await waitFor("the lease to expire", async () => ((await db.lease.findUniqueOrThrow({ where: { id: lease.leaseId } })).status === "expired" ? true : undefined), LEASE_TIMEOUT_MS + 10_000);
      // Its task is back in the market: the machine (idle again) is leased it anew, on its stream.
      const again = (await waitFor("the task leased again", async () => heard.offers.find((o) => o.leases?.some((l) => l.taskId === lease.taskId && l.leaseId !== lease.leaseId)), 10_000)).leases![0]!;
      expect(again.jobId).toBe(jobId);
      // The new lease's result is taken; the expired one's, reported after, comes too late.
      expect((await api.report(emptyReport(machineId, again.leaseId))).accepted).toBe(true);
      const stale = await api.report(emptyReport(machineId, lease.leaseId)).catch((e: unknown) => e);
      expect(refusalOf(stale)).toEqual({ code: "stale-lease", leaseId: lease.leaseId });
    } finally {
      live.settings.terms = terms;
      await done();
    }
  });
});
