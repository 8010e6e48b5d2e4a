import http from "node:http";
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCClientError } from "@trpc/client";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { runLease, type TestLease } from "../support/worker.ts";
import { createTrpcApi } from "../../apps/worker-runtime/src/node/trpc-api.ts";
import type { WorkerApi } from "../../apps/worker-runtime/src/api.ts";
import { startTrpcReference } from "../support/trpc-reference.ts";

// A worker's report is answered beside tRPC's handler (http/quick-worker-route.ts), the call every
// finished task makes. What a worker hears must not change: the same bytes and status as tRPC's
// own answer for an accepted report, for a refusal, and for an error met after the report joined
// its group commit; and the acknowledgement comes only once the result is in PostgreSQL.
//
// tRPC's own answer is had by sending the same call without a declared length (chunked): the
// quick route reads only bodies of a known length, so such a call goes to tRPC's handler, whose
// answer is itself chunked. A lease or a registration is read here whatever its framing: tRPC's
// answer to it is had from a server of tRPC's handler alone over the same market.

let market: TestMarket;
let token: string;
let api: WorkerApi;
let machineId: string;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
let reference: Awaited<ReturnType<typeof startTrpcReference>>;
let referenceUrl: string;

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  token = (await producer.account.tokens.create.mutate({ name: "rack" })).token;
  api = createTrpcApi(market.url, token);
  ({ machineId } = await api.register({ name: "rack", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "test" }));
  reference = await startTrpcReference(market.manager.services);
  referenceUrl = reference.url;
});
afterAll(async () => {
  await reference?.close();
  await market?.stop();
});

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** Whether tRPC's handler wrote it (in chunks) rather than the quick route (one body of known length). */
  chunked: boolean;
}

/**
 * POSTs `input` to procedure `path` over real HTTP, as one call or as a batch of one; `chunked`
 * sends it without a length, which only tRPC's handler takes of a report; `reference` sends it to
 * tRPC's handler alone.
 */
function post(path: string, input: unknown, how: { batch?: boolean; chunked?: boolean; auth?: string | null; reference?: boolean } = {}): Promise<Answer> {
  const body = JSON.stringify(how.batch ? { 0: input } : input);
  const url = new URL(`${how.reference ? referenceUrl : market.url}/api/trpc/${path}${how.batch ? "?batch=1" : ""}`);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const auth = how.auth === undefined ? `Bearer ${token}` : how.auth;
  if (auth) headers.authorization = auth;
  if (!how.chunked) headers["content-length"] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers, chunked: res.headers["transfer-encoding"] === "chunked" }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (how.chunked) req.write(body.slice(0, 10));
    req.end(how.chunked ? body.slice(10) : body);
  });
}

/** An answer as a worker reads it: its status, the headers tRPC sets, and its bytes with this request's own id in place of the id. */
function heard(a: Answer) {
  const id = String(a.headers["x-request-id"]);
  return { status: a.status, contentType: a.headers["content-type"], vary: a.headers.vary, retryAfter: a.headers["retry-after"], body: a.body.split(id).join("<request>") };
}

/** The same answer but for the values of its fields: the keys, their order and the nesting (leases differ in their ids). */
const shape = (body: string) => JSON.stringify(JSON.parse(body), (_key, value: unknown) => (typeof value === "string" || typeof value === "number" ? typeof value : value));

async function submit(tasks: number) {
  const { decision } = await consumer.jobs.submit.mutate({
    name: "pi",
    source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: tasks },
    benefit: { kind: "constant", value: 100 },
  });
  expect(decision.outcome).toBe("admitted");
}

async function leases(n: number): Promise<TestLease[]> {
  const got: TestLease[] = [];
  while (got.length < n) {
    const { leases } = await api.lease({ machineId, max: n - got.length });
    if (!leases.length) throw new Error(`only ${got.length} of ${n} tasks could be leased`);
    got.push(...leases);
  }
  return got;
}

const worker = () => market.tokenClient(token);
const emptyReport = (leaseId: string) => ({ machineId, leaseId, exitCode: 0, stdout: "", stderr: "", outputHash: createHash("sha256").digest("hex"), elapsedMs: 5 });

describe("a report answered beside tRPC's handler", () => {
  it("is acknowledged with tRPC's bytes, single and batched, with and without the next leases", async () => {
    await submit(8);
    const [a, b, c, d, e, f] = await leases(6);
    const run = (l: TestLease) => runLease(worker(), machineId, l);

    const quick = await post("worker.report", await run(a!));
    const slow = await post("worker.report", await run(b!), { chunked: true });
    expect([quick.chunked, slow.chunked]).toEqual([false, true]);
    expect(heard(quick)).toEqual(heard(slow));
    expect(quick.body).toBe('{"result":{"data":{"accepted":true}}}');

    // A batch of one, as a batching link sends it, asking for the next task too.
    const quickBatch = await post("worker.report", { ...(await run(c!)), lease: { machineId, max: 1 } }, { batch: true });
    const slowBatch = await post("worker.report", { ...(await run(d!)), lease: { machineId, max: 1 } }, { batch: true, chunked: true });
    expect([quickBatch.chunked, slowBatch.chunked]).toEqual([false, true]);
    expect(quickBatch.status).toBe(200);
    expect(JSON.parse(quickBatch.body)[0].result.data.leases).toHaveLength(1);
    expect(shape(quickBatch.body)).toBe(shape(slowBatch.body));

    const quickMany = await post("worker.reportMany", { reports: [await run(e!)], lease: { machineId, max: 4 } });
    const slowMany = await post("worker.reportMany", { reports: [await run(f!)], lease: { machineId, max: 4 } }, { chunked: true });
    expect(quickMany.chunked).toBe(false);
    expect(JSON.parse(quickMany.body).result.data.answers).toEqual([{ accepted: true }]);
    expect(heard({ ...quickMany, body: shape(quickMany.body) })).toEqual(heard({ ...slowMany, body: shape(slowMany.body) }));
  });

  it("hands a refusal to tRPC before anything happens, so the worker hears tRPC's own refusal", async () => {
    const report = emptyReport(randomUUID());
    const cases: [unknown, { auth?: string | null }][] = [
      [{ ...report, outputHash: "0".repeat(64) }, {}], // the output does not match its hash
      [{ ...report, machineId: "no-such-machine" }, {}], // not this producer's machine
      [{ ...report, exitCode: "zero" }, {}], // not of the schema
      [report, { auth: null }], // no credentials
      [report, { auth: "Bearer not-a-token" }],
    ];
    for (const [input, how] of cases) {
      for (const batch of [false, true]) {
        const quick = await post("worker.report", input, { ...how, batch });
        const slow = await post("worker.report", input, { ...how, batch, chunked: true });
        expect(quick.status).toBeGreaterThanOrEqual(400);
        expect(quick.chunked).toBe(true); // tRPC's handler wrote it
        expect(heard(quick)).toEqual(heard(slow));
      }
    }
  });

  it("answers an error met in the group commit as tRPC does, single and batched", async () => {
    // A lease that is not current passes every check on arrival and is refused at its turn.
    for (const batch of [false, true]) {
      const quick = await post("worker.report", emptyReport(randomUUID()), { batch });
      const slow = await post("worker.report", emptyReport(randomUUID()), { batch, chunked: true });
      expect([quick.chunked, slow.chunked]).toEqual([false, true]);
      expect(quick.status).toBe(409);
      const error = batch ? JSON.parse(quick.body)[0].error : JSON.parse(quick.body).error;
      expect(error.data).toMatchObject({ code: "CONFLICT", httpStatus: 409, reason: { code: "stale-lease" }, requestId: quick.headers["x-request-id"] });
      // The lease id named in the reason is the report's own: the rest is byte for byte tRPC's.
      const own = (a: Answer) => JSON.parse(a.body.slice(batch ? 1 : 0, batch ? -1 : undefined)).error.data.reason.leaseId as string;
      expect(heard({ ...quick, body: quick.body.replace(own(quick), "<lease>") })).toEqual(heard({ ...slow, body: slow.body.replace(own(slow), "<lease>") }));
    }
    // The worker's own client reads it as the refusal it is.
    const refused = await api.report(emptyReport(randomUUID())).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect((refused as TRPCClientError<never>).data).toMatchObject({ code: "CONFLICT", reason: { code: "stale-lease" } });
  });

  it("leases work with tRPC's bytes, and hands a lease of someone else's machine to tRPC", async () => {
    await submit(2);
    const quick = await post("worker.lease", { machineId, max: 1 });
    const slow = await post("worker.lease", { machineId, max: 1 }, { reference: true });
    expect([quick.chunked, slow.chunked]).toEqual([false, true]);
    expect(JSON.parse(quick.body).result.data.leases).toHaveLength(1);
    expect(JSON.parse(slow.body).result.data.leases).toHaveLength(1);
    expect(heard({ ...quick, body: shape(quick.body) })).toEqual(heard({ ...slow, body: shape(slow.body) }));
    // The two tasks are held: the next call gets nothing, answered at once all the same.
    expect((await post("worker.lease", { machineId, max: 1 })).body).toBe('{"result":{"data":{"leases":[]}}}');
    const foreign = await post("worker.lease", { machineId: "no-such-machine", max: 1 });
    expect(foreign.chunked).toBe(true);
    expect(heard(foreign)).toEqual(heard(await post("worker.lease", { machineId: "no-such-machine", max: 1 }, { reference: true })));
  });

  it("registers a machine with tRPC's bytes, and hands an offer no market takes to tRPC", async () => {
    const profile = { name: "joining", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "test" };
    const quick = await post("worker.register", profile);
    const slow = await post("worker.register", profile, { reference: true });
    expect([quick.chunked, slow.chunked]).toEqual([false, true]);
    expect(heard({ ...quick, body: shape(quick.body) })).toEqual(heard({ ...slow, body: shape(slow.body) }));
    // The machine is in the market's memory and its row, and works at once.
    const joined = JSON.parse(quick.body).result.data.machineId as string;
    expect(market.manager.services.market.state.machines.has(joined)).toBe(true);
    const before = Date.now();
    const row = await market.manager.services.db.machine.findUniqueOrThrow({ where: { id: joined } });
    expect(row).toMatchObject({ name: "joining", kind: "opportunistic", status: "active", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBps: 1e7, pricePerSecondMicro: 1000n, contractPriceMicro: null, availableUntil: null, userAgent: "test", localAvailable: true, departedAt: null });
    expect(row.controls).toEqual(market.manager.services.market.state.machines.get(joined)!.controls);
    expect(row.apiTokenId).not.toBeNull();
    expect(before - row.registeredAt.getTime()).toBeLessThan(60_000);
    expect(row.registeredAt.getTime()).toBeLessThanOrEqual(before);
    expect(JSON.parse((await post("worker.heartbeat", { machineId: joined, leaseIds: [] })).body).result.data).toBeTruthy();
    for (const offer of [{ ...profile, speed: 1000 }, { ...profile, kind: "dedicated" }]) {
      const refusedQuick = await post("worker.register", offer);
      expect(refusedQuick.chunked).toBe(true);
      expect(refusedQuick.status).toBe(400);
      expect(heard(refusedQuick)).toEqual(heard(await post("worker.register", offer, { reference: true })));
    }
  });

  it("acknowledges a report only once its result is in PostgreSQL", async () => {
    await submit(3);
    const [a, b, c] = await leases(3);
    const db = market.manager.services.db;
    const one = await runLease(worker(), machineId, a!);
    expect(await api.report(one)).toEqual({ accepted: true });
    // Read the moment the answer came: the result with what it was paid, its task done, its producer credited.
    const result = await db.result.findUnique({ where: { id: a!.leaseId } });
    expect(result?.accepted).toBe(true);
    expect(result?.paidMicro).toBe((await db.lease.findUniqueOrThrow({ where: { id: a!.leaseId } })).pieceRateMicro);
    expect((await db.task.findUnique({ where: { id: a!.taskId } }))?.status).toBe("done");
    const job = (await db.task.findUniqueOrThrow({ where: { id: a!.taskId } })).jobId;
    const credited = () => db.ledgerPosting.aggregate({ _sum: { amountMicro: true }, where: { entry: { kind: "payment", jobId: job }, account: { kind: "producer" } } }).then((x) => x._sum.amountMicro);
    expect(await credited()).toBe(result!.paidMicro);

    const many = await api.reportMany!({ reports: [await runLease(worker(), machineId, b!), await runLease(worker(), machineId, c!)] });
    expect(many.answers).toEqual([{ accepted: true }, { accepted: true }]);
    const written = await db.result.findMany({ where: { id: { in: [b!.leaseId, c!.leaseId] } } });
    expect(written.map((r) => r.accepted)).toEqual([true, true]);
    // A second report of the same lease is refused and pays nothing more.
    const again = await api.report(one).catch((e: unknown) => e);
    expect((again as TRPCClientError<never>).data).toMatchObject({ reason: { code: "stale-lease" } });
    expect(await credited()).toBe(written.reduce((s, r) => s + r.paidMicro!, result!.paidMicro!));
  });
});
