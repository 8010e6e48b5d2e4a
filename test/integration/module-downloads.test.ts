import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paddedModule } from "../support/wasm.ts";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";

// A worker fetches the program of each task it runs (`worker.module`), once per program: every
// machine that gets a task of a new job asks for the same bytes, and the market answers the
// recent ones from memory (tasks/module-downloads.ts).

let market: TestMarket;
let worker: Awaited<ReturnType<TestMarket["signUpProducer"]>>["worker"];
let consumeToken: string;

beforeAll(async () => {
  market = await startTestMarket();
  const consumer = await market.signUp("buyer@example.test", ["consumer"]);
  consumeToken = (await consumer.account.tokens.create.mutate({ name: "upload", scopes: ["consume"] })).token;
  ({ worker } = await market.signUpProducer("seller@example.test"));
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
    const together = await Promise.all(Array.from({ length: 20 }, () => fetched(hash)));
    for (const bytes of [...together, await fetched(hash)]) expect(Buffer.compare(bytes, program)).toBe(0);
  });

  it("refuses a program not stored, and serves it at the next fetch once it is", async () => {
    const program = paddedModule(40_000);
    const hash = createHash("sha256").update(program).digest("hex");
    expect(await refusal(fetched(hash))).toMatchObject({ code: "not-found", what: "module" });
    await store(program);
    expect(Buffer.compare(await fetched(hash), program)).toBe(0);
  });

  it("answers a program fetched before from memory, without reading it from PostgreSQL again", async () => {
    const program = paddedModule(50_000);
    const hash = await store(program);
    expect(Buffer.compare(await fetched(hash), program)).toBe(0);
    // Programs never leave the market; the row is taken away here only to show where the next answer comes from.
    await market.manager.services.db.module.delete({ where: { hash } });
    expect(Buffer.compare(await fetched(hash), program)).toBe(0);
  });
});
