import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { mutation, send } from "./http.ts";

// Quotas per user and per request: each refusal is a 429 (or a 400 for a request that is too
// big to be one call) that names its limit and says when to retry.

let market: TestMarket;
const LIMITS = { QUOTES_PER_MINUTE: "3", SUBMISSIONS_PER_MINUTE: "3", QUEUED_TASKS_PER_USER: "100", STREAMS_PER_MACHINE: "2" };
const job = (taskCount: number) => ({
  name: "pi",
  source: { kind: "example", example: "montecarlo", params: { samplesPerTask: 1000 }, taskCount },
  benefit: { kind: "constant", value: 1 },
});
const machine = { name: "m", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" };

async function tokenFor(email: string, roles: ("consumer" | "producer")[]) {
  const user = await market.signUp(email, [...roles, "producer"]);
  const { token } = await user.account.tokens.create.mutate({ name: "quota", scopes: roles.includes("consumer") ? ["produce", "consume"] : ["produce"] });
  return { authorization: `Bearer ${token}` };
}

beforeAll(async () => {
  market = await startTestMarket({ ...LIMITS, QUOTES_PER_MINUTE: LIMITS.QUOTES_PER_MINUTE, SUBMISSIONS_PER_MINUTE: LIMITS.SUBMISSIONS_PER_MINUTE });
});
afterAll(() => market?.stop());

function expectLimit(res: Awaited<ReturnType<typeof send>>, limit: string) {
  expect(res.status, res.text).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(res.json.error.data.reason).toMatchObject({ code: "limit-reached", limit });
}

describe("quotas", () => {
  it("one request carries at most so many calls", async () => {
    const auth = await tokenFor("batch@example.test", ["consumer"]);
    const paths = Array(50).fill("account.me").join(",");
    const res = await send(`${market.url}/api/trpc/${paths}?batch=1&input=${encodeURIComponent("{}")}`, { headers: auth });
    expect(res.status).toBe(400);
    expect(res.json.reason).toMatchObject({ code: "batch-too-large", limit: "calls-per-batch", calls: 50 });
  });

  it("quotes and submissions per user per minute", async () => {
    const auth = await tokenFor("busy@example.test", ["consumer"]);
    for (let i = 0; i < 3; i++) expect((await mutation(market.url, "jobs.quote", job(1), auth)).status).toBe(200);
    expectLimit(await mutation(market.url, "jobs.quote", job(1), auth), "quotes-per-minute");
    for (let i = 0; i < 3; i++) expect((await mutation(market.url, "jobs.submit", job(1), auth)).status).toBe(200);
    expectLimit(await mutation(market.url, "jobs.submit", job(1), auth), "submissions-per-minute");
    // Another user is not held up.
    expect((await mutation(market.url, "jobs.quote", job(1), await tokenFor("calm@example.test", ["consumer"]))).status).toBe(200);
  });

  it("queued tasks per user", async () => {
    const auth = await tokenFor("big@example.test", ["consumer"]);
    expect((await mutation(market.url, "jobs.submit", job(80), auth)).status).toBe(200);
    const res = await mutation(market.url, "jobs.submit", job(30), auth);
    expectLimit(res, "queued-tasks-per-user");
    expect(res.json.error.data.reason).toMatchObject({ max: 100, queued: 80, adding: 30 });
  });

  it("open streams per machine, given back when a stream closes", async () => {
    const auth = await tokenFor("seller@example.test", []);
    const { json } = await mutation(market.url, "worker.register", machine, auth);
    const machineId = json.result.data.machineId as string;
    const url = `${market.url}/api/trpc/live.work?input=${encodeURIComponent(JSON.stringify({ machineId }))}`;
    const open = () => {
      const aborter = new AbortController();
      return { aborter, res: fetch(url, { headers: { ...auth, accept: "text/event-stream" }, signal: aborter.signal }) };
    };
    const streams = [open(), open()];
    for (const s of streams) expect((await s.res).status).toBe(200);
    // A stream's status is sent before its procedure runs: the refusal is the stream's one event.
    const third = await send(url, { headers: { ...auth, accept: "text/event-stream" } });
    expect(third.text).toMatch(/"code":"limit-reached","limit":"streams-per-machine","max":2,"retryAfterSeconds":\d+/);
    streams[0]!.aborter.abort();
    await expect
      .poll(async () => {
        const again = open();
        const status = (await again.res).status;
        again.aborter.abort();
        return status;
      }, { timeout: 5000 })
      .toBe(200);
    streams[1]!.aborter.abort();
  });
});
