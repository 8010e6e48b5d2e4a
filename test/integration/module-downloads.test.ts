import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paddedModule } from "../support/wasm.ts";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";
import { leaseOfModule } from "../support/worker.ts";

// A worker fetches the program of each task it runs (`worker.module`), once per program, while it
// holds a lease of a task that runs it: every machine that gets a task of a new job asks for the
// same bytes, and the market answers the recent ones from memory (tasks/module-downloads.ts).

let market: TestMarket;
let consumer: ReturnType<TestMarket["tokenClient"]>;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;
let consumeToken: string;

beforeAll(async () => {
  market = await startTestMarket();
  const buyer = await market.signUp("buyer@example.test", ["consumer"]);
  consumeToken = (await buyer.account.tokens.create.mutate({ name: "upload", scopes: ["consume"] })).token;
  consumer = market.tokenClient(consumeToken);
  ({ worker } = await market.signUpProducer("seller@example.test"));
  ({ machineId } = await worker.worker.register.mutate({
    name: "rack", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.001, userAgent: "test",
  }));
});
afterAll(() => market?.stop());

async function store(bytes: Uint8Array): Promise<string> {
  const put = await fetch(`${market.url}/api/modules`, { method: "PUT", headers: { authorization: `Bearer ${consumeToken}` }, body: new Uint8Array(bytes) });
  expect(put.ok).toBe(true);
  return createHash("sha256").update(bytes).digest("hex");
}

const fetched = async (hash: string) => new Uint8Array(Buffer.from((await worker.worker.module.query({ moduleHash: hash })).bytes, "base64"));

describe("a program fetched by many machines", () => {
  it("gives every fetch, at once or one after another, the bytes stored", async () => {
    const program = paddedModule(300_000);
    const hash = await store(program);
    await leaseOfModule(consumer, worker, machineId, hash);
    const together = await Promise.all(Array.from({ length: 20 }, () => fetched(hash)));
    for (const bytes of [...together, await fetched(hash)]) expect(Buffer.compare(bytes, program)).toBe(0);
  });

  it("refuses a program not stored, and one stored that none of the machine's leases runs, in the same words", async () => {
    const never = createHash("sha256").update(paddedModule(40_000)).digest("hex");
    expect(await refusal(fetched(never))).toMatchObject({ code: "not-found", what: "module" });
    const program = paddedModule(41_000);
    const hash = await store(program);
    expect(await refusal(fetched(hash))).toMatchObject({ code: "not-found", what: "module" });
    await leaseOfModule(consumer, worker, machineId, hash);
    expect(Buffer.compare(await fetched(hash), program)).toBe(0);
  });

  it("answers a program fetched before from memory, without reading it from PostgreSQL again", async () => {
    const program = paddedModule(50_000);
    const hash = await store(program);
    await leaseOfModule(consumer, worker, machineId, hash);
    expect(Buffer.compare(await fetched(hash), program)).toBe(0);
    // Programs never change; the stored bytes are wiped here only to show where the next answer comes from.
    await market.manager.services.db.module.update({ where: { hash }, data: { bytes: new Uint8Array(0) } });
    expect(Buffer.compare(await fetched(hash), program)).toBe(0);
  });
});
