import http from "node:http";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTrpcReference } from "../support/trpc-reference.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";

// `jobs.submit` and the work stream `live.work` are answered beside tRPC's HTTP adapter
// (http/submit-route.ts, http/work-stream-route.ts) through the router's own procedures. Every
// answer must be the adapter's: the same status, headers and bytes, refusals included, or the
// web app, the SDK and the workers' unchanged tRPC clients would read something else. Each call
// here is sent to the market's server and to a server of tRPC's adapter alone over the same
// market, and the two answers compared (the request id and an event's market version aside, which
// differ from call to call; and how the body is framed on the connection, which no client sees).

let market: TestMarket;
let reference: Awaited<ReturnType<typeof startTrpcReference>>;
let referenceUrl: string;
let consumer: Record<string, string>;
let producer: Record<string, string>;
let other: Record<string, string>;
let limited: Record<string, string>;

/** Enough for the calls below of one user; `limited` goes past it. */
const SUBMISSIONS_PER_MINUTE = 40;
const small = (name: string) => ({
  name,
  source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount: 2 },
  benefit: { kind: "constant", value: 5 },
});
const profile = { name: "m", kind: "opportunistic", slots: 2, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.0001, userAgent: "test" };

interface Exchange {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Headers a client reads (the date, the request id and the body's framing aside). */
function headersOf(res: Response) {
  const out: Record<string, string> = {};
  for (const [k, v] of res.headers) if (!["date", "x-request-id", "content-length", "transfer-encoding", "keep-alive"].includes(k)) out[k] = v;
  return out;
}

/** The answer with its request id (in the body and the header) written as REQ. */
async function exchange(res: Response): Promise<Exchange> {
  const text = await res.text();
  const id = res.headers.get("x-request-id");
  return { status: res.status, headers: headersOf(res), text: normalize(text, id) };
}
const normalize = (text: string, requestId: string | null) => (requestId ? text.split(requestId).join("REQ") : text);

const post = (base: string, path: string, body: string, headers: Record<string, string>) =>
  fetch(`${base}/api/trpc/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

/** The same call to the market and to tRPC's adapter alone. */
async function both(path: string, body: string, headers: Record<string, string>) {
  const direct = await exchange(await post(market.url, path, body, headers));
  const adapter = await exchange(await post(referenceUrl, path, body, headers));
  return { direct, adapter };
}

async function tokenHeaders(email: string, roles: ("producer" | "consumer")[], scopes: ("consume" | "produce")[]) {
  const client = await market.signUp(email, roles);
  const { token } = await client.account.tokens.create.mutate({ name: "t", scopes });
  return { authorization: `Bearer ${token}` };
}

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000", SUBMISSIONS_PER_MINUTE: String(SUBMISSIONS_PER_MINUTE) });
  const services = market.manager.services;
  reference = await startTrpcReference(services);
  referenceUrl = reference.url;
  consumer = await tokenHeaders("buyer@example.test", ["consumer"], ["consume"]);
  producer = await tokenHeaders("seller@example.test", ["producer"], ["produce"]);
  other = await tokenHeaders("other@example.test", ["producer"], ["produce"]);
  limited = await tokenHeaders("limited@example.test", ["consumer"], ["consume"]);
});
afterAll(async () => {
  await reference?.close();
  await market?.stop();
});

describe("jobs.submit beside tRPC's adapter", () => {
  it("refuses as the adapter does: no credentials, the wrong role or scope, bad input, a body that is not JSON", async () => {
    const cases: [string, string, Record<string, string>][] = [
      ["no credentials", JSON.stringify(small("a")), {}],
      ["a producer's token", JSON.stringify(small("a")), producer],
      ["bad input", JSON.stringify({ ...small("a"), benefit: { kind: "constant" } }), consumer],
      ["no name and too many tasks", JSON.stringify({ ...small(""), source: { kind: "example", example: "montecarlo", params: {}, taskCount: 10_000_000 } }), consumer],
      ["not JSON", "{ not json", consumer],
      ["no body", "", consumer],
    ];
    for (const [what, body, headers] of cases) {
      const { direct, adapter } = await both("jobs.submit", body, headers);
      expect(direct.status, what).toBeGreaterThanOrEqual(400);
      expect(direct, what).toEqual(adapter);
      // The same as a batch of one, as the web app's batching link sends it.
      const batched = await both("jobs.submit?batch=1", body ? `{"0":${body}}` : "", headers);
      expect(batched.direct, `${what}, batched`).toEqual(batched.adapter);
    }
  });

  it("says when to retry past the submission quota, in the body and the Retry-After header, as the adapter does", async () => {
    for (let i = 0; i < SUBMISSIONS_PER_MINUTE; i++) expect((await post(market.url, "jobs.submit", JSON.stringify(small(`q${i}`)), limited)).status).toBe(200);
    const { direct, adapter } = await both("jobs.submit", JSON.stringify(small("over")), limited);
    expect(direct.status).toBe(429);
    expect(direct.headers["retry-after"]).toBeDefined();
    // The seconds left may tick between the two calls.
    const seconds = (e: Exchange) => ({ ...e, headers: { ...e.headers, "retry-after": "S" }, text: e.text.replace(/"retryAfterSeconds":\d+/, '"retryAfterSeconds":S').replace(/\d+ seconds?/, "N seconds") });
    expect(seconds(direct)).toEqual(seconds(adapter));
  });

  it("answers an admitted job as the adapter does, alone and as a batch of one", async () => {
    for (const batch of [false, true]) {
      const body = JSON.stringify(batch ? { 0: small("ok") } : small("ok"));
      const path = batch ? "jobs.submit?batch=1" : "jobs.submit";
      const { direct, adapter } = await both(path, body, consumer);
      expect(direct.status).toBe(200);
      // Two jobs: their ids and the market's figures at each moment differ, the answer's form may not.
      const form = (e: Exchange) => ({ ...e, text: e.text.replace(/"[0-9a-f-]{36}"/g, '"ID"').replace(/-?\d+(\.\d+)?(e[-+]?\d+)?/g, "0") });
      expect(form(direct)).toEqual(form(adapter));
      expect(JSON.parse(direct.text)).toEqual(batch ? [{ result: { data: { jobId: expect.any(String), decision: expect.any(Object) } } }] : { result: { data: { jobId: expect.any(String), decision: expect.any(Object) } } });
    }
  });
});

/** The same GET to the market and to tRPC's adapter alone: a page's poll. */
async function bothGet(pathAndQuery: string, headers: Record<string, string>) {
  const get = async (base: string) => exchange(await fetch(`${base}/api/trpc/${pathAndQuery}`, { headers }));
  return { direct: await get(market.url), adapter: await get(referenceUrl) };
}

const inputOf = (value: unknown) => encodeURIComponent(JSON.stringify(value));

describe("the pages' polls beside tRPC's adapter", () => {
  // Figures that move between two calls (a job's estimate is made at the moment asked) are written out.
  const form = (e: Exchange) => ({ ...e, text: e.text.replace(/-?\d+(\.\d+)?(e[-+]?\d+)?/g, "0") });

  it("answers a job page's batched poll, and each query alone, as the adapter does", async () => {
    const submitted = await post(market.url, "jobs.submit", JSON.stringify(small("page")), consumer);
    const { result } = (await submitted.json()) as { result: { data: { jobId: string } } };
    const jobId = result.data.jobId;
    const own = { jobId };
    const batched = await bothGet(`jobs.get,jobs.progress,ledger.balance?batch=1&input=${inputOf({ 0: own, 1: own })}`, consumer);
    expect(batched.direct.status).toBe(200);
    expect(form(batched.direct)).toEqual(form(batched.adapter));
    const [view] = JSON.parse(batched.direct.text) as [{ result: { data: { id: string; name: string } } }];
    expect(view.result.data).toMatchObject({ id: jobId, name: "page" });
    for (const call of [`jobs.get?input=${inputOf(own)}`, `jobs.outputs?input=${inputOf({ ...own, fromIndex: 0, limit: 50 })}`, "ledger.balance", `jobs.progress?batch=1&input=${inputOf({ 0: own })}`]) {
      const { direct, adapter } = await bothGet(call, consumer);
      expect(direct.status, call).toBe(200);
      expect(form(direct), call).toEqual(form(adapter));
    }
    // Someone else's job does not exist for them; within a batch, beside a call that succeeds (207).
    const mixed = await bothGet(`ledger.balance,jobs.get?batch=1&input=${inputOf({ 1: own })}`, limited);
    expect(mixed.direct.status).toBe(207);
    expect(form(mixed.direct)).toEqual(form(mixed.adapter));
  });

  it("refuses as the adapter does: no credentials, a producer's token, bad input, input that is not JSON, a procedure it does not answer", async () => {
    const id = { jobId: randomUUID() };
    const cases: [string, string, Record<string, string>][] = [
      ["no credentials", `jobs.get?input=${inputOf(id)}`, {}],
      ["a producer's token", `jobs.get,ledger.balance?batch=1&input=${inputOf({ 0: id })}`, producer],
      ["not a job id", `jobs.get?input=${inputOf({ jobId: "x" })}`, consumer],
      ["no input", "jobs.get", consumer],
      ["no such job", `jobs.get?batch=1&input=${inputOf({ 0: id })}`, consumer],
      ["input not JSON", "jobs.get?input=%7Bnot", consumer],
      ["a batch's input not an object", `jobs.get?batch=1&input=${inputOf([id])}`, consumer],
      ["another procedure in the batch", `jobs.get,jobs.list?batch=1&input=${inputOf({ 0: id })}`, consumer],
    ];
    for (const [what, call, headers] of cases) {
      const { direct, adapter } = await bothGet(call, headers);
      expect(direct.status, what).not.toBe(200); // 207 for the producer: their balance, and the job refused
      expect(direct, what).toEqual(adapter);
    }
  });
});

/** A work stream's whole transcript, as its bytes arrive. */
function openStream(base: string, input: unknown, headers: Record<string, string>) {
  const controller = new AbortController();
  const seen = { status: 0, headers: {} as Record<string, string>, text: "", requestId: null as string | null, ended: false };
  const done = (async () => {
    const res = await fetch(`${base}/api/trpc/live.work?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { accept: "text/event-stream", ...headers }, signal: controller.signal });
    seen.status = res.status;
    seen.headers = headersOf(res);
    seen.requestId = res.headers.get("x-request-id");
    const decoder = new TextDecoder();
    const reader = res.body!.getReader();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) seen.text += decoder.decode(r.value, { stream: true });
    } catch {
      // closed by the test
    }
    seen.ended = true;
  })();
  return { seen, close: () => controller.abort(), done };
}

/** A transcript with its request id and its events' market versions (`run.revision`) written out. */
const transcript = (s: ReturnType<typeof openStream>["seen"]) => ({ status: s.status, headers: s.headers, text: normalize(s.text, s.requestId).replace(/^id: [\w.-]+$/gm, "id: V") });

describe("live.work beside tRPC's adapter", () => {
  it("refuses a stream for someone else's machine, and one without credentials, with the adapter's events", async () => {
    const { machineId } = await (await post(market.url, "worker.register", JSON.stringify(profile), producer)).json().then((j) => j.result.data);
    for (const headers of [other, {}]) {
      const direct = openStream(market.url, { machineId }, headers);
      const adapter = openStream(referenceUrl, { machineId }, headers);
      await Promise.all([direct.done, adapter.done]);
      expect(direct.seen.text).toContain("event: serialized-error");
      expect(transcript(direct.seen)).toEqual(transcript(adapter.seen));
    }
  });

  it("sends the connected event, an offer for new work, a ping when quiet and the error of a departed machine as the adapter does", { timeout: 60_000 }, async () => {
    const { machineId } = await (await post(market.url, "worker.register", JSON.stringify({ ...profile, name: "s" }), producer)).json().then((j) => j.result.data);
    const direct = openStream(market.url, { machineId }, producer);
    const adapter = openStream(referenceUrl, { machineId }, producer);
    const heard = (what: string) => waitFor(what, async () => (direct.seen.text.includes(what) && adapter.seen.text.includes(what)) || undefined, 20_000, 20);
    await heard("event: connected");
    expect((await post(market.url, "jobs.submit", JSON.stringify(small("offer")), consumer)).status).toBe(200);
    await heard('"available"');
    // tRPC's ping interval is 10 s (api/trpc.ts).
    await heard("event: ping");
    expect((await post(market.url, "worker.depart", JSON.stringify({ machineId }), producer)).status).toBe(200);
    await Promise.all([direct.done, adapter.done]);
    expect(direct.seen.text).toContain("event: serialized-error");
    expect(transcript(direct.seen)).toEqual(transcript(adapter.seen));
  });
});
