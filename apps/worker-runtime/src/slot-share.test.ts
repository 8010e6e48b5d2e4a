import { afterAll, describe, expect, it } from "vitest";
import { EXAMPLES } from "./examples.ts";
import { createNodePool } from "./node/pool.ts";
import { runProducer, type MachineProfile } from "./producer.ts";
import { SlotShare } from "./slot-share.ts";
import { FakeMarket } from "./testing/fake-market.ts";
import { exampleBytes } from "./testing/fixtures.ts";

const machine: MachineProfile = { name: "shared", kind: "opportunistic", speed: 1, memoryPerSlotMb: 64, bandwidthBytesPerSecond: 1e6, pricePerSecond: 1, userAgent: "vitest" };
const limits = { wallMs: 10_000, memoryPages: 64, outputBytes: 1024 };
const SLOTS = 2;
const TASKS = 8;
const pool = createNodePool({ slots: SLOTS });
afterAll(() => pool.close());

/** A market whose every lease answer is counted with the other's: the most leases the machine held from both at once. */
async function marketsSharing(n: number) {
  const markets = Array.from({ length: n }, () => new FakeMarket());
  const held = { now: () => markets.reduce((s, m) => s + m.leases.size, 0), most: 0 };
  for (const [i, m] of markets.entries()) {
    const hash = await m.addModule(exampleBytes("montecarlo"));
    const params = EXAMPLES.montecarlo.params.parse({ samplesPerTask: 300_000 });
    for (let t = 0; t < TASKS; t++) m.queue.push({ taskId: `job${i}/${t}`, jobId: `job${i}`, moduleHash: hash, args: EXAMPLES.montecarlo.taskArgs(t, TASKS, params), stdin: "", limits });
    const lease = m.lease.bind(m);
    m.lease = async (input) => {
      const answer = await lease(input);
      held.most = Math.max(held.most, held.now());
      return answer;
    };
  }
  return { markets, held };
}

describe("one machine's slots shared by loops for several managers", () => {
  it("runs every manager's tasks without the managers together leasing more than its slots", async () => {
    const { markets, held } = await marketsSharing(2);
    const share = new SlotShare();
    const controller = new AbortController();
    const loops = markets.map((api) => runProducer({ api, executor: pool, machine, slots: SLOTS, signal: controller.signal, share, idleBackoff: { minMs: 10, maxMs: 50 } }));
    const deadline = Date.now() + 30_000;
    while (markets.some((m) => m.reports.length < TASKS) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const summaries = await Promise.all(loops);
    expect(summaries.map((s) => s.reportsAccepted)).toEqual([TASKS, TASKS]);
    // Each loop alone would take up to its slots (and spare leases besides): together they stay within them.
    expect(held.most).toBeLessThanOrEqual(SLOTS);
    expect(held.most).toBeGreaterThan(0);
  });

  it("lets each loop take the whole machine when the other has nothing", async () => {
    const { markets, held } = await marketsSharing(2);
    markets[1]!.queue.length = 0;
    const share = new SlotShare();
    const controller = new AbortController();
    const loops = markets.map((api) => runProducer({ api, executor: pool, machine, slots: SLOTS, signal: controller.signal, share, idleBackoff: { minMs: 10, maxMs: 50 } }));
    const deadline = Date.now() + 30_000;
    while (markets[0]!.reports.length < TASKS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await Promise.all(loops);
    expect(markets[0]!.reports).toHaveLength(TASKS);
    expect(markets[0]!.maxOutstanding).toBe(SLOTS);
    expect(held.most).toBe(SLOTS);
  });

  it("keeps idle loops from waking each other: with no work anywhere each asks at its own idle pace", async () => {
    const { markets } = await marketsSharing(2);
    for (const m of markets) m.queue.length = 0;
    const share = new SlotShare();
    const controller = new AbortController();
    const loops = markets.map((api) => runProducer({ api, executor: pool, machine, slots: SLOTS, signal: controller.signal, share, idleBackoff: { minMs: 10, maxMs: 50 } }));
    await new Promise((r) => setTimeout(r, 500));
    controller.abort();
    await Promise.all(loops);
    // Backing off from 10 to 50 ms, a loop asks about a dozen times in half a second.
    for (const m of markets) expect(m.leaseTimes.length).toBeLessThan(40);
  });
});
