import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { connect } from "../../packages/client/src/index.ts";
import { exampleBytes } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { paddedModule } from "../support/wasm.ts";
import { leaseOfModule, runLease } from "../support/worker.ts";
import { send } from "./http.ts";

// Programs are private. A consumer's module travels to the machines that run its tasks, so its hash
// is no secret: every producer that ran one of the tasks has seen it. The attacks: a producer that
// never ran the owner's tasks, or no longer runs one, fetches the bytes by hash; a consumer who
// never sent the bytes runs a job naming them by hash; a stranger reads the job's outputs.

type Client = ReturnType<TestMarket["tokenClient"]>;

let market: TestMarket;
let owner: Client;
let ownerToken: string;
let stranger: Client;
let strangerToken: string;
const program = paddedModule(30_000);
const hash = createHash("sha256").update(program).digest("hex");
/** The producer whose machine runs the owner's task. */
let runner: { worker: Client; machineId: string };
/** A producer that never ran any of the owner's tasks. */
let snoop: { worker: Client; machineId: string };
let jobId: string;
let lease: Awaited<ReturnType<typeof leaseOfModule>>["lease"];

const machine = (name: string) => ({ name, kind: "opportunistic" as const, slots: 1, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "test" });

async function consumer(email: string) {
  const session = await market.signUp(email, ["consumer"]);
  const { token } = await session.account.tokens.create.mutate({ name: "jobs", scopes: ["consume"] });
  return { client: market.tokenClient(token), token };
}

async function producer(email: string) {
  const { worker } = await market.signUpProducer(email);
  const { machineId } = await worker.worker.register.mutate(machine(email.split("@")[0]!));
  return { worker, machineId };
}

const upload = (token: string, bytes: Uint8Array) =>
  fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: new Uint8Array(bytes) });

const byHash = (moduleHash: string) => ({
  name: "by hash",
  source: { kind: "module" as const, moduleHash, workPerTask: 0.01, tasks: [{ args: [] }] },
  benefit: { kind: "constant" as const, value: 50 },
});

beforeAll(async () => {
  market = await startTestMarket();
  ({ client: owner, token: ownerToken } = await consumer("owner@example.test"));
  ({ client: stranger, token: strangerToken } = await consumer("stranger@example.test"));
  expect((await upload(ownerToken, program)).status).toBe(201);
  // The runner's machine is the only one when the owner's job arrives, so its task goes there.
  runner = await producer("runner@example.test");
  ({ jobId, lease } = await leaseOfModule(owner, runner.worker, runner.machineId, hash, "secret program"));
  snoop = await producer("snoop@example.test");
});
afterAll(() => market?.stop());

describe("a module's bytes", () => {
  it("go to the machine holding a lease of a task that runs it", async () => {
    for (const ask of [{ moduleHash: hash }, { moduleHash: hash, machineId: runner.machineId }]) {
      const { bytes } = await runner.worker.worker.module.query(ask);
      expect(Buffer.compare(Buffer.from(bytes, "base64"), program)).toBe(0);
    }
  });

  it("are refused to a producer that never ran the owner's tasks, as if there were no such module", async () => {
    expect(await refusal(snoop.worker.worker.module.query({ moduleHash: hash }))).toMatchObject({ code: "not-found", what: "module" });
    expect(await refusal(snoop.worker.worker.module.query({ moduleHash: hash.toUpperCase() }))).toMatchObject({ code: "not-found", what: "module" });
    // Naming its own machine, or the runner's, does not help.
    for (const machineId of [snoop.machineId, runner.machineId]) {
      expect(await refusal(snoop.worker.worker.module.query({ moduleHash: hash, machineId }))).toMatchObject({ code: "not-found", what: "module" });
    }
  });

  it("are refused to the runner once its lease has ended: seeing the hash once is not a key", async () => {
    const report = await runLease(runner.worker, runner.machineId, lease);
    expect(await runner.worker.worker.report.mutate(report)).toMatchObject({ accepted: true });
    expect(await refusal(runner.worker.worker.module.query({ moduleHash: hash }))).toMatchObject({ code: "not-found", what: "module" });
  });
});

describe("a job naming a module by hash", () => {
  it("is refused, quoted or submitted, to a consumer who never sent those bytes, and nothing is stored", async () => {
    const jobsBefore = await market.manager.services.db.job.count();
    expect(await refusal(stranger.jobs.submit.mutate(byHash(hash)))).toMatchObject({ code: "module-unknown", hash });
    expect(await refusal(stranger.jobs.quote.mutate(byHash(hash)))).toMatchObject({ code: "module-unknown", hash });
    // The answer is the one for a module never sent at all: it does not say the module exists.
    const never = "ab".repeat(32);
    expect(await refusal(stranger.jobs.submit.mutate(byHash(never)))).toMatchObject({ code: "module-unknown", hash: never });
    expect(await stranger.jobs.module.query({ hash })).toBeNull();
    expect(await market.manager.services.db.job.count()).toBe(jobsBefore);
  });

  it("is taken once that consumer sends the same bytes: stored once, free, and the right is theirs", async () => {
    const again = await upload(strangerToken, program);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ hash, stored: false });
    expect(await market.manager.services.db.module.count({ where: { hash } })).toBe(1);
    expect(await stranger.jobs.module.query({ hash })).toMatchObject({ hash });
    expect((await stranger.jobs.quote.mutate(byHash(hash))).outcome).toBeDefined();
  });

  it("through the SDK, sends the bytes when the market holds them for someone else only", async () => {
    const other = paddedModule(31_000);
    expect((await upload(ownerToken, other)).status).toBe(201);
    const sdk = connect({ url: market.url, token: strangerToken });
    const first = await sdk.uploadModule(other);
    expect(first).toMatchObject({ uploaded: true });
    expect(await sdk.uploadModule(other)).toMatchObject({ hash: first.hash, uploaded: false });
  });

  it("may name a shipped example's module, the market's own, without sending it", async () => {
    const example = createHash("sha256").update(exampleBytes("montecarlo")).digest("hex");
    expect(await stranger.jobs.module.query({ hash: example })).toMatchObject({ hash: example });
    const job = { ...byHash(example), source: { ...byHash(example).source, tasks: [{ args: ["1000"] }] } };
    expect((await stranger.jobs.quote.mutate(job)).outcome).toBeDefined();
    const { jobId: exampleJob } = await stranger.jobs.submit.mutate(job);
    expect(await market.manager.services.db.job.findUnique({ where: { id: exampleJob }, select: { moduleHash: true } })).toEqual({ moduleHash: example });
  });
});

describe("a job's outputs", () => {
  it("are read by its owner only: anyone else is told there is no such job", async () => {
    expect(await owner.jobs.outputs.query({ jobId })).toHaveLength(1);
    expect(await refusal(stranger.jobs.outputs.query({ jobId }))).toMatchObject({ code: "not-found", what: "job" });
    expect(await refusal(stranger.jobs.jobFile.query({ jobId }))).toMatchObject({ code: "not-found", what: "job" });
    const download = await send(`${market.url}/api/jobs/${jobId}/tasks/0/stdout`, { headers: { authorization: `Bearer ${strangerToken}` } });
    expect(download.status).toBe(404);
    const archive = await send(`${market.url}/api/jobs/${jobId}/archive.tar`, { headers: { authorization: `Bearer ${strangerToken}` } });
    expect(archive.status).toBe(404);
    expect((await send(`${market.url}/api/jobs/${jobId}/archive.tar`, { headers: { authorization: `Bearer ${ownerToken}` } })).status).toBe(200);
  });
});
