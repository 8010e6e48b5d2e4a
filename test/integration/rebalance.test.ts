import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOOP_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import { startTestMarket, type TestMarket } from "../support/market.ts";

// docs/DESIGN.md "Rebalancing": a queued task moves to a machine that joined with idle slots when that
// costs less and finishes no later. The move is decided in the sweeper's tick from memory and its
// statement goes to the market's journal (market/rebalance.ts): the machine that now holds the
// task leases it, the decision log says so, and a restart queues the task where it was moved.

let market: TestMarket;
let worker: ReturnType<TestMarket["tokenClient"]>;
let consumer: Awaited<ReturnType<TestMarket["signUp"]>>;

const db = () => market.manager.services.db;
const machine = (name: string, slots: number) => ({ name, kind: "opportunistic" as const, slots, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test" });

beforeAll(async () => {
  market = await startTestMarket({ LEASE_TIMEOUT_MS: "600000" });
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  ({ worker } = await market.signUpProducer("seller@example.test", "racks"));
});
afterAll(() => market?.stop());

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("rebalancing", () => {
  it("moves queued tasks to a machine that joined idle, durably, and that machine leases them", async () => {
    const { machineId: busy } = await worker.worker.register.mutate(machine("busy", 1));
    const { jobId, decision } = await consumer.jobs.submit.mutate({
      name: "queue",
      source: { kind: "upload", moduleBase64: Buffer.from(wat(LOOP_WAT)).toString("base64"), tasks: Array.from({ length: 8 }, () => ({ args: [], stdin: "" })), workPerTask: 5, memoryMbPerTask: 16 },
      benefit: { kind: "constant", value: 100 },
    });
    expect(decision.outcome).toBe("admitted");
    // The only machine holds every task: one slot, a long queue.
    expect(await db().task.count({ where: { jobId, machineId: busy, status: "queued" } })).toBe(8);

    const { machineId: idle } = await worker.worker.register.mutate(machine("idle", 4));
    const moves = await until("a move in the decision log", async () => {
      const rows = await db().marketDecision.findMany({ where: { outcome: "move", jobId } });
      return rows.length ? rows : null;
    });
    expect(moves.every((m) => m.machineId === idle && (m.detail as { fromMachineId: string }).fromMachineId === busy)).toBe(true);
    // The rows say where the tasks are queued now, as memory does.
    const movedRows = await until("the moved tasks' rows", async () => {
      const n = await db().task.count({ where: { jobId, machineId: idle, status: "queued" } });
      return n >= moves.length ? n : null;
    });
    expect(movedRows).toBe(moves.length);
    expect(await db().task.count({ where: { jobId, machineId: busy, status: "queued" } })).toBe(8 - moves.length);

    // A restart queues them where they were moved: the idle machine leases them.
    await market.restart();
    const { leases } = await worker.worker.lease.mutate({ machineId: idle, max: 4 });
    expect(leases.length).toBeGreaterThanOrEqual(Math.min(4, moves.length));
    const leased = await db().task.findMany({ where: { id: { in: leases.map((l) => l.taskId) } } });
    expect(leased.every((t) => t.status === "leased" && t.machineId === idle)).toBe(true);
  });
});
