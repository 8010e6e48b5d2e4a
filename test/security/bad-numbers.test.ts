import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { moduleImporting } from "../support/wasm.ts";
import { LEAKS, send } from "./http.ts";

// Numbers a careless or hostile client sends at the edge: the smallest double (5e-324, a denormal
// that rounds to nothing), 0, and Infinity (JSON has no Infinity, but `1e999` parses to it). Each
// is refused with the field and its range, and nothing is stored. Task file names that are the
// task's root itself are refused like names that leave it.

let market: TestMarket;
let producer: Record<string, string>;
let consumer: Record<string, string>;
let consumerClient: ReturnType<TestMarket["tokenClient"]>;
let hash: string;

const machine = { name: "m", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.5, userAgent: "test" };
const INFINITY = "__infinity__";

/** A tRPC mutation whose body is written by hand, so `1e999` (Infinity once parsed) can be sent. */
const raw = (path: string, input: unknown, headers: Record<string, string>) =>
  send(`${market.url}/api/trpc/${path}`, {
    method: "POST",
    body: JSON.stringify(input).replaceAll(`"${INFINITY}"`, "1e999"),
    headers: { ...headers, "content-type": "application/json" },
  });

/** 400, the field named with its range, no internals. */
function expectRange(res: Awaited<ReturnType<typeof send>>, field: string, range: RegExp) {
  expect(res.status, res.text).toBe(400);
  expect(res.text).not.toMatch(LEAKS);
  expect(res.json.error.data.reason.code).toBe("invalid-input");
  const issue = res.json.error.data.reason.issues.find((i: { path: string[] }) => i.path.join(".") === field);
  expect(issue, res.json.error.message).toBeDefined();
  expect(issue.message).toMatch(range);
  expect(res.json.error.message).toContain(field);
}

beforeAll(async () => {
  market = await startTestMarket();
  const seller = await market.signUp("seller@example.test", ["producer"]);
  producer = { authorization: `Bearer ${(await seller.account.tokens.create.mutate({ name: "rack" })).token}` };
  const buyer = await market.signUp("buyer@example.test", ["consumer"]);
  const token = (await buyer.account.tokens.create.mutate({ name: "jobs", scopes: ["consume"] })).token;
  consumer = { authorization: `Bearer ${token}` };
  consumerClient = market.tokenClient(token);
  const program = moduleImporting("wasi_snapshot_preview1", "proc_exit");
  expect((await fetch(`${market.url}/api/modules`, { method: "PUT", headers: consumer, body: new Uint8Array(program) })).ok).toBe(true);
  hash = createHash("sha256").update(program).digest("hex");
});
afterAll(() => market?.stop());

describe("a machine's registration", () => {
  const machines = () => market.manager.services.db.machine.count();

  for (const value of [5e-324, 0, -1, 51, INFINITY]) {
    it(`refuses a speed of ${value === INFINITY ? "Infinity" : value}, naming the field and the range`, async () => {
      const before = await machines();
      expectRange(await raw("worker.register", { ...machine, speed: value }, producer), "speed", /at least 0\.01 and at most 50/);
      expect(await machines()).toBe(before);
    });
  }

  it("refuses a bandwidth of nothing or of a denormal, naming the range", async () => {
    for (const value of [5e-324, 0, INFINITY]) expectRange(await raw("worker.register", { ...machine, bandwidthBytesPerSecond: value }, producer), "bandwidthBytesPerSecond", /at least 1000 and at most 1000000000000/);
  });

  it("refuses a price below one micro-credit but above nothing, or past its limit; takes a price of 0", async () => {
    for (const value of [5e-324, 1e-7, INFINITY, -0.5]) expectRange(await raw("worker.register", { ...machine, pricePerSecond: value }, producer), "pricePerSecond", /0, or at least 0\.000001 .*at most 1,000,000/);
    const dedicated = { ...machine, kind: "dedicated", departsAt: Date.now() + 3_600_000 };
    for (const value of [5e-324, INFINITY]) expectRange(await raw("worker.register", { ...dedicated, contractPrice: value }, producer), "contractPrice", /at least 0\.000001 .*at most 1,000,000,000/);
    const free = await raw("worker.register", { ...machine, name: "volunteer", pricePerSecond: 0 }, producer);
    expect(free.status, free.text).toBe(200);
  });
});

describe("a job", () => {
  const jobs = () => market.manager.services.db.job.count();
  const byHash = (patch: Record<string, unknown>, task: Record<string, unknown> = {}) => ({
    name: "numbers",
    source: { kind: "module", moduleHash: hash, workPerTask: 0.01, tasks: [{ args: [], ...task }], ...patch },
    benefit: { kind: "constant", value: 10 },
  });

  it("refuses a work estimate of a denormal, 0 or Infinity, naming the range, and stores nothing", async () => {
    const before = await jobs();
    for (const value of [5e-324, 0, INFINITY, 86_401]) {
      expectRange(await raw("jobs.submit", byHash({ workPerTask: value }), consumer), "source.workPerTask", /at least 0\.001 and at most 86400/);
      expectRange(await raw("jobs.quote", byHash({ workPerTask: value }), consumer), "source.workPerTask", /at least 0\.001 and at most 86400/);
    }
    const upload = { name: "numbers", source: { kind: "upload", moduleBase64: "AGFzbQEAAAA=", tasks: [{ args: [] }], workPerTask: 5e-324 }, benefit: { kind: "constant", value: 10 } };
    expectRange(await raw("jobs.submit", upload, consumer), "source.workPerTask", /at least 0\.001 and at most 86400/);
    expect(await jobs()).toBe(before);
  });

  it("refuses a wall-time limit of a denormal, 0 or Infinity, naming the range", async () => {
    for (const value of [5e-324, 0, INFINITY, 3601]) {
      expectRange(await raw("jobs.submit", byHash({ limits: { memoryMb: 64, wallSeconds: value } }), consumer), "source.limits.wallSeconds", /at least 0\.001 and at most 3600 seconds/);
    }
    expectRange(await raw("jobs.submit", byHash({ limits: { memoryMb: 0, wallSeconds: 10 } }), consumer), "source.limits.memoryMb", /at least 1 and at most 4096 MB/);
  });

  it("refuses input file names that are the task's root, as it refuses names that leave it", async () => {
    const before = await jobs();
    const data = Buffer.from("x").toString("base64");
    for (const [name, problem] of [[".", "root"], ["./.", "root"], ["./", "root"], ["../x", "parent"]] as const) {
      const reason = await refusal(consumerClient.jobs.submit.mutate(byHash({}, { files: { [name]: data } }) as never));
      expect(reason).toMatchObject({ code: "file-name-refused", task: 0, name, problem });
    }
    expect(await jobs()).toBe(before);
    // A name that only starts at the root is a file like any other.
    const fine = await consumerClient.jobs.quote.mutate(byHash({}, { files: { "./in.txt": data } }) as never);
    expect(fine.outcome).toBeDefined();
  });
});

describe("the admin's settings", () => {
  it("refuse a price constant or a grant below one micro-credit, naming the range, and change nothing", async () => {
    const admin = await market.signIn(market.manager.admin!.email, market.manager.admin!.password);
    const before = await admin.admin.settings.get.query();
    for (const patch of [{ priceConstant: 5e-324 }, { priceConstant: 0 }, { startingCredits: 5e-324 }, { marketReserve: 1e-9 }]) {
      const reason = await refusal(admin.admin.settings.set.mutate(patch));
      expect(reason.code).toBe("invalid-input");
      expect(String(reason.message)).toContain(Object.keys(patch)[0]!);
      expect(String(reason.message)).toMatch(/at least 0\.000001/i);
    }
    expect((await admin.admin.settings.get.query()).current).toEqual(before.current);
  });
});
