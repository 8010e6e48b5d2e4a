import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Worker } from "node:worker_threads";
import net from "node:net";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// The health port (MARKET_HEALTH_PORT): `/healthz` answered by a thread of its own, so a load
// balancer's check is answered at once while the market's thread is busy, and still says when
// that thread has stopped running.

let market: TestMarket;
let health: string;

beforeAll(async () => {
  market = await startTestMarket({ MARKET_HEALTH_PORT: "0", MARKET_HEALTH_STALL_SECONDS: "2" });
  health = `http://127.0.0.1:${market.manager.healthPort}`;
});
afterAll(() => market?.stop());

type Answer = { url: string; status: number; body: Record<string, unknown>; answeredAt: number };

/**
 * Asks `urls` from a thread of the test's own, `afterMs` after being told to, while this thread
 * (the market's: the test runs it in-process) is blocked for `blockMs`; returns when each answer
 * arrived, in ms since the epoch, and when the block ended.
 */
async function askWhileBlocked(urls: string[], blockMs: number, afterMs = 0) {
  const asker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     parentPort.once("message", async () => {
       await new Promise((r) => setTimeout(r, workerData.afterMs));
       const answers = await Promise.all(workerData.urls.map(async (url) => {
         const res = await fetch(url);
         const body = await res.json();
         return { url, status: res.status, body, answeredAt: Date.now() };
       }));
       parentPort.postMessage(answers);
     });
     // Its first fetch loads the HTTP client: done before the block, which times the answers alone.
     fetch(workerData.urls[0]).then((r) => r.arrayBuffer()).then(() => parentPort.postMessage("ready"));`,
    { eval: true, workerData: { urls, afterMs } },
  );
  await new Promise((resolve) => asker.once("message", resolve));
  const answers = new Promise<Answer[]>((resolve, reject) => {
    asker.once("message", resolve);
    asker.once("error", reject);
  });
  asker.postMessage("go");
  // Blocks this thread as a long step of the market's would: no timer, no socket, nothing runs.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, blockMs);
  const blockEnded = Date.now();
  try {
    return { answers: await answers, blockEnded };
  } finally {
    await asker.terminate();
  }
}

describe("the health port", () => {
  it("answers /healthz while the market's thread is busy, where the market's own port waits for it", async () => {
    const { answers, blockEnded } = await askWhileBlocked([`${health}/healthz`, `${market.url}/healthz`], 1_000);
    const [own, main] = answers;
    expect(own!.status).toBe(200);
    expect(own!.body).toMatchObject({ ok: true, machines: 0 });
    // Answered during the block, by the health thread's clock and by the asker's.
    expect(own!.body.at as number).toBeLessThan(blockEnded);
    expect(own!.answeredAt).toBeLessThan(blockEnded);
    // The market's thread last ran when the block began.
    expect(own!.body.lastTurnMsAgo as number).toBeLessThan(1_000);
    // The market's own /healthz could only be answered once its thread ran again.
    expect(main!.status).toBe(200);
    expect(main!.answeredAt).toBeGreaterThanOrEqual(blockEnded);
  });

  it("counts the market's machines", async () => {
    const { worker } = await market.signUpProducer("health-seller@example.test");
    const { machineId } = await worker.worker.register.mutate({ name: "health-rack", kind: "opportunistic", slots: 1, speed: 1, memoryPerSlotMb: 256, bandwidthBytesPerSecond: 1e6, pricePerSecond: 0.1, userAgent: "test" });
    await expect.poll(async () => ((await (await fetch(`${health}/healthz`)).json()) as { machines: number }).machines, { timeout: 2_000 }).toBe(1);
    await worker.worker.depart.mutate({ machineId });
  });

  it("answers 503 with the reason once the market's thread has not run past the stall bound", async () => {
    const { answers } = await askWhileBlocked([`${health}/healthz`], 3_500, 2_600);
    const [own] = answers;
    expect(own!.status).toBe(503);
    expect(own!.body.ok).toBe(false);
    expect(own!.body.lastTurnMsAgo as number).toBeGreaterThan(2_000);
    expect(own!.body.reason).toMatch(/^The market's thread has not run for \d+ s \(the bound is 2 s\)\.$/);
    // Once it runs again, healthy again.
    await expect.poll(async () => (await fetch(`${health}/healthz`)).status, { timeout: 2_000 }).toBe(200);
  });

  it("answers nothing else", async () => {
    const res = await fetch(`${health}/api/trpc/worker.heartbeat`, { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toBe("This port answers GET /healthz only; the market's API is on its own port.");
  });

  it("a taken health port is named with the variable that moves it, and the market does not start", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(startTestMarket({ MARKET_HEALTH_PORT: String(taken) })).rejects.toThrow(`Port ${taken} is taken by another program; set MARKET_HEALTH_PORT to a free port.`);
    } finally {
      blocker.close();
    }
  });
});
