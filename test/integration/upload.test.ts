import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moduleImporting, paddedModule } from "../support/wasm.ts";
import { refusal, startTestMarket, type TestMarket } from "../support/market.ts";

// The Task Manager's check at upload: a bad module is refused with its reason and nothing is stored.

let market: TestMarket;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;
const MAX = 64 * 1024;

beforeAll(async () => {
  market = await startTestMarket({ MAX_MODULE_BYTES: String(MAX) });
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
});
afterAll(() => market?.stop());

const upload = (bytes: Uint8Array, name = "my job") => ({
  name,
  source: {
    kind: "upload" as const,
    moduleBase64: Buffer.from(bytes).toString("base64"),
    tasks: [{ args: ["1"] }, { args: ["2"] }],
    workPerTask: 1,
  },
  benefit: { kind: "constant" as const, value: 100 },
});

async function nothingStored() {
  const db = market.manager.services.db;
  expect(await db.job.count()).toBe(0);
  expect(await db.module.count()).toBe(0);
  expect(await db.task.count()).toBe(0);
}

describe("module upload", () => {
  it("refuses bytes that are not WebAssembly", async () => {
    const reason = await refusal(consumer.jobs.submit.mutate(upload(new TextEncoder().encode("#!/bin/sh\necho hi\n"))));
    expect(reason.code).toBe("module-not-wasm");
    await nothingStored();
  });

  it("refuses a module importing a call outside WASI preview 1", async () => {
    const reason = await refusal(consumer.jobs.submit.mutate(upload(moduleImporting("wasi_snapshot_preview1", "sock_open"))));
    expect(reason).toMatchObject({ code: "module-forbidden-import", module: "wasi_snapshot_preview1", name: "sock_open" });
    await nothingStored();
  });

  it("refuses a module importing from outside WASI", async () => {
    const reason = await refusal(consumer.jobs.submit.mutate(upload(moduleImporting("env", "abort"))));
    expect(reason).toMatchObject({ code: "module-forbidden-import", module: "env", name: "abort" });
    await nothingStored();
  });

  it("refuses a module over the size limit, saying the limit", async () => {
    const reason = await refusal(consumer.jobs.submit.mutate(upload(paddedModule(MAX + 1))));
    expect(reason).toMatchObject({ code: "module-too-large", bytes: MAX + 1, maxBytes: MAX });
    await nothingStored();
  });

  it("refuses an increasing benefit curve before looking at the module", async () => {
    const bad = { ...upload(moduleImporting("wasi_snapshot_preview1", "proc_exit")), benefit: { kind: "piecewise", points: [{ t: 0, value: 1 }, { t: 10, value: 5 }] } };
    const reason = await refusal(consumer.jobs.submit.mutate(bad as never));
    expect(reason.code).toBe("invalid-input");
    await nothingStored();
  });

  it("accepts a valid module just under the limit and stores the job with its tasks", async () => {
    const { jobId, decision } = await consumer.jobs.submit.mutate(upload(paddedModule(MAX - 16), "ok job"));
    expect(["admitted", "delayed", "rejected"]).toContain(decision.outcome);
    const db = market.manager.services.db;
    const job = await db.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(job.name).toBe("ok job");
    expect(await db.module.count()).toBe(1);
  });

  it("takes two submissions of one new module at once, storing the module once", async () => {
    const bytes = paddedModule(MAX - 32);
    const answers = await Promise.all([consumer.jobs.submit.mutate(upload(bytes, "twin a")), consumer.jobs.submit.mutate(upload(bytes, "twin b"))]);
    expect(answers.map((a) => typeof a.jobId)).toEqual(["string", "string"]);
    const db = market.manager.services.db;
    expect(await db.job.count({ where: { name: { in: ["twin a", "twin b"] } } })).toBe(2);
    expect(await db.module.count()).toBe(2);
  });
});
