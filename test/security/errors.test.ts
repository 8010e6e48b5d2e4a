import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { LEAKS, mutation, send } from "./http.ts";

// Errors are data: a code, a message that names the field and its limit, a reason and a request
// id, never a stack or a file path; and whatever PostgreSQL would refuse is refused at the schema.

let market: TestMarket;
let user: Awaited<ReturnType<TestMarket["signUp"]>>;
let consumer: Record<string, string>;
let worker: Record<string, string>;

const job = (name: string, args: string[] = ["1"]) => ({
  name,
  source: { kind: "upload", moduleBase64: "AGFzbQEAAAA=", tasks: [{ args }], workPerTask: 1 },
  benefit: { kind: "constant", value: 1 },
});
const machine = { name: "m", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" };

beforeAll(async () => {
  market = await startTestMarket();
  user = await market.signUp("both@example.test", ["consumer", "producer"]);
  const { token } = await user.account.tokens.create.mutate({ name: "attacks", scopes: ["produce", "consume"] });
  worker = { authorization: `Bearer ${token}` };
  consumer = worker;
});
afterAll(() => market?.stop());

/** A refusal by the schema: 400, no internals, the field named with what is wrong with it. */
function expectRefusedField(res: Awaited<ReturnType<typeof send>>, field: string, words: RegExp) {
  expect(res.status, res.text).toBe(400);
  expect(res.text).not.toMatch(LEAKS);
  const error = res.json.error;
  expect(error.data.reason.code).toBe("invalid-input");
  expect(error.message).toContain(field);
  expect(error.message).toMatch(words);
}

describe("errors", () => {
  it("carry a code, a message, a reason and a request id, and never a stack", async () => {
    const res = await mutation(market.url, "jobs.submit", job("x"));
    expect(res.status).toBe(401);
    expect(res.text).not.toMatch(LEAKS);
    expect(res.json.error.data.code).toBe("UNAUTHORIZED");
    expect(res.json.error.data.requestId).toBe(res.headers.get("x-request-id"));
    expect(res.json.error.data).toHaveProperty("reason");
  });

  it("refuse NUL bytes and lone surrogates in a job's name, naming the field", async () => {
    expectRefusedField(await mutation(market.url, "jobs.submit", job("pi\u0000"), consumer), "name", /control characters/);
    expectRefusedField(await mutation(market.url, "jobs.submit", job("pi\uD800"), consumer), "name", /Unicode/);
    expectRefusedField(await mutation(market.url, "jobs.submit", job("x".repeat(121)), consumer), "name", /at most 120/);
  });

  it("refuse a NUL byte in a task's argument", async () => {
    expectRefusedField(await mutation(market.url, "jobs.submit", job("ok", ["a\u0000b"]), consumer), "args", /NUL/);
  });

  it("refuse a NUL byte in a token's name and a machine's name", async () => {
    // Tokens are made signed in (a token cannot mint tokens): the session's call is refused by the schema.
    const refused = await refusal(user.account.tokens.create.mutate({ name: "t\u0000", scopes: ["produce"] }));
    expect(String(refused.message)).toMatch(/control characters|NUL/);
    expectRefusedField(await mutation(market.url, "worker.register", { ...machine, name: "m\u0000" }, worker), "name", /control characters|NUL/);
  });

  it("refuse out-of-range numbers with a clean 400", async () => {
    expectRefusedField(await mutation(market.url, "worker.register", { ...machine, speed: 1e308 }, worker), "speed", /at most/);
    expectRefusedField(await mutation(market.url, "worker.register", { ...machine, pricePerSecond: 1e308 }, worker), "pricePerSecond", /at most/);
    const report = { machineId: "m", leaseId: "l", exitCode: 1e15, stdout: "", stderr: "", outputHash: "h", elapsedMs: 1 };
    expectRefusedField(await mutation(market.url, "worker.report", report, worker), "exitCode", /2147483647|too big|at most/i);
  });

  it("refuse a user name the database would refuse, at the auth routes", async () => {
    const res = await send(`${market.url}/api/auth/sign-up/email`, { json: { email: "nul@example.test", password: "correct horse battery", name: "a\u0000b" } });
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(LEAKS);
    expect(res.json.message).toMatch(/name/);
    expect(await market.manager.services.db.user.count({ where: { email: "nul@example.test" } })).toBe(0);
  });
});
