import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { moduleImporting } from "../support/wasm.ts";
import { MIXED_BATCH_MAX_BYTES, OFF_THREAD_MIN_BYTES } from "../../apps/market-manager/src/http/held-body.ts";
import { LEAKS, mutation, send } from "./http.ts";

// A submission or quote of OFF_THREAD_MIN_BYTES or more is parsed, checked and stored by an
// intake thread (http/held-body.ts, tasks/intake-pool.ts), not by the API's own input parsing.
// Through that path too: bad input is a 400 naming the field and its limit, a refused job leaves
// nothing behind, and an accepted job's tasks are all stored before the answer.

let market: TestMarket;
let consumer: Record<string, string>;
let hash: string;

/** A job whose request body passes the intake threads' threshold: 400 tasks with 1 KB of stdin each. */
const big = (name: string, o: { tasks?: number; stdin?: string; replicas?: number } = {}) => ({
  name,
  source: { kind: "module", moduleHash: hash, workPerTask: 0.01, tasks: Array.from({ length: o.tasks ?? 400 }, (_, i) => ({ args: [String(i)], stdin: o.stdin ?? Buffer.alloc(1024, i).toString("base64") })) },
  benefit: { kind: "constant", value: 5 },
  replicas: o.replicas ?? 1,
});

beforeAll(async () => {
  market = await startTestMarket({ QUEUED_TASKS_PER_USER: "5000" });
  const user = await market.signUp("big@example.test", ["consumer"]);
  const { token } = await user.account.tokens.create.mutate({ name: "big", scopes: ["consume"] });
  consumer = { authorization: `Bearer ${token}` };
  const upload = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: consumer, body: new Uint8Array(moduleImporting("wasi_snapshot_preview1", "proc_exit")) });
  hash = ((await upload.json()) as { hash: string }).hash;
});
afterAll(() => market?.stop());

const jobCount = () => market.manager.services.db.job.count();

function expectRefused(res: Awaited<ReturnType<typeof send>>, field: string, words: RegExp) {
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(res.text).not.toMatch(LEAKS);
  const { error } = res.json[0] ?? res.json; // a batch answers with a list
  expect(error.data.reason.code).toBe("invalid-input");
  expect(error.message).toContain(field);
  expect(error.message).toMatch(words);
}

describe("a big submission, parsed off the market's thread", () => {
  it("is refused with a 400 naming the field and its limit, and leaves nothing behind", async () => {
    expect(JSON.stringify(big("x")).length).toBeGreaterThan(OFF_THREAD_MIN_BYTES);
    const before = await jobCount();
    expectRefused(await mutation(market.url, "jobs.submit", big("pi\u0000"), consumer), "name", /control characters/);
    expectRefused(await mutation(market.url, "jobs.submit", big("x", { tasks: 10_001, stdin: "" }), consumer), "tasks", /10000/);
    // Past the schema, the job file's own limits answer with their reason (job-request.ts).
    const stdin = await mutation(market.url, "jobs.quote", big("x", { tasks: 1, stdin: "A".repeat(1_400_004) }), consumer);
    expect(stdin.status, stdin.text.slice(0, 300)).toBe(400);
    expect(stdin.json.error.data.reason).toMatchObject({ code: "stdin-too-large" });
    // The web app's client batches: the input is under "0".
    expectRefused(await send(`${market.url}/api/trpc/jobs.submit?batch=1`, { json: { 0: big("x".repeat(121)) }, headers: consumer }), "name", /at most 120/);
    const unknown = await mutation(market.url, "jobs.submit", { ...big("x"), source: { ...big("x").source, moduleHash: "0".repeat(64) } }, consumer);
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.data.reason).toMatchObject({ code: "module-unknown" });
    const garbage = await send(`${market.url}/api/trpc/jobs.submit`, { body: `{"name":"x",${" ".repeat(OFF_THREAD_MIN_BYTES)}`, headers: { ...consumer, "content-type": "application/json" } });
    expect(garbage.status).toBe(400);
    expect(garbage.text).not.toMatch(LEAKS);
    expect(await jobCount()).toBe(before);
  });

  it("beside other calls in one batch, is limited to 1 MiB (it is parsed with them)", async () => {
    const two = `${market.url}/api/trpc/jobs.quote,jobs.quote?batch=1`;
    const small = await send(two, { json: { 0: big("a", { tasks: 10 }), 1: big("b", { tasks: 10 }) }, headers: consumer });
    expect(small.status, small.text.slice(0, 300)).toBe(200);
    expect(small.json.map((r: { result: { data: { outcome: string } } }) => r.result.data.outcome)).toEqual(["delayed", "delayed"]);
    const over = await send(two, { json: { 0: big("a", { tasks: 1000 }), 1: big("b", { tasks: 10 }) }, headers: consumer });
    expect(over.status).toBe(413);
    expect(over.json.error.data.reason).toMatchObject({ code: "request-too-large", maxBytes: MIXED_BATCH_MAX_BYTES });
    expect(over.json.error.message).toMatch(/send it alone/);
  });

  it("is refused over its owner's queued-tasks quota before anything is stored", async () => {
    const before = await jobCount();
    const res = await mutation(market.url, "jobs.submit", big("too many", { tasks: 2000, stdin: "AAAA", replicas: 5 }), consumer);
    expect(res.status, res.text.slice(0, 300)).toBe(429);
    expect(res.json.error.data.reason).toMatchObject({ limit: "queued-tasks-per-user", adding: 10_000 });
    expect(await jobCount()).toBe(before);
  });

  it("is quoted and accepted with every copy of every task stored before the answer", async () => {
    const quote = await mutation(market.url, "jobs.quote", big("quoted"), consumer);
    expect(quote.status, quote.text.slice(0, 300)).toBe(200);
    expect(quote.json.result.data.outcome).toBe("delayed"); // no machine in this market
    const res = await mutation(market.url, "jobs.submit", big("stored", { replicas: 2 }), consumer);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const jobId = res.json.result.data.jobId as string;
    const { db } = market.manager.services;
    expect(await db.task.count({ where: { jobId } })).toBe(800);
    const t = await db.task.findFirstOrThrow({ where: { jobId, index: 7, replica: 1 } });
    expect(t.args).toEqual(["7"]);
    expect(Buffer.from(t.stdin)).toEqual(Buffer.alloc(1024, 7));
    const view = await send(`${market.url}/api/trpc/jobs.get?input=${encodeURIComponent(JSON.stringify({ jobId }))}`, { headers: consumer });
    expect(view.json.result.data).toMatchObject({ name: "stored", taskCount: 400 });
  });
});
