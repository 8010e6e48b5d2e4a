import { describe, expect, it } from "vitest";
import { DEFAULT_CONTROLS } from "@cyclemarket/worker-runtime";
import { LiveState, type LiveMachine } from "./live.ts";
import { MAX_IDLE_LOOKS, WorkRoutes } from "./work-routes.ts";
import { TaskQueue } from "./task-queue.ts";

// Which workers hear of new work: a market event wakes the streams of the machines that can
// lease because of it, never every stream, so an event costs the same with 10 or 10,000 machines.

function machine(id: string, o: { slots?: number; price?: bigint; queue?: number; leases?: number; paused?: boolean } = {}): LiveMachine {
  return {
    id, ownerId: `owner-${id}`, name: id, kind: "opportunistic", slots: o.slots ?? 1, speed: 1, benchmarkSpeed: 1, network: null, memoryPerSlotMb: 512, pricePerSecondMicro: o.price ?? 100n,
    reputation: 1, contractPriceMicro: null, departsAt: null, contractStartAt: null, contractPaidUntil: null, contractPaidMicro: 0n, unprovenExpiries: 0,
    queue: TaskQueue.of(Array.from({ length: o.queue ?? 0 }, (_, i) => `${id}-t${i}`)),
    leases: new Set(Array.from({ length: o.leases ?? 0 }, (_, i) => `${id}-l${i}`)),
    lastHeartbeatAt: 0, controls: { ...DEFAULT_CONTROLS, paused: o.paused ?? false }, localAvailable: true,
  };
}

/** A market of these machines, each with an open work stream that counts its wake-ups. */
function market(...machines: LiveMachine[]) {
  const state = new LiveState();
  const routes = new WorkRoutes({ state });
  const woken = new Map<string, number>();
  for (const m of machines) {
    state.machines.set(m.id, m);
    routes.watch(m.id, () => woken.set(m.id, (woken.get(m.id) ?? 0) + 1));
  }
  const wokenIds = () => [...woken.keys()].sort();
  return { state, routes, woken, wokenIds, idle: (...ids: string[]) => ids.forEach((id) => routes.markIdle(id, true)) };
}

describe("waking work streams", () => {
  it("wakes only the machine whose queue grew when it can start its tasks itself", () => {
    const m = market(machine("a", { slots: 2, queue: 2 }), machine("b"), machine("c"));
    m.idle("b", "c");
    m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(m.wokenIds()).toEqual(["a"]);
  });

  it("wakes idle machines for spare queued work, as many as the spare tasks need, not every idle one", () => {
    // a has one slot and five queued tasks: four are spare; each idle one-slot machine leases up to two.
    const m = market(machine("a", { queue: 5 }), machine("b"), machine("c"), machine("d"), machine("e"));
    m.idle("b", "c", "d", "e");
    m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(m.wokenIds()).toEqual(["a", "b", "c"]);
    // b and c took the four spare tasks; one more arrives. Woken ones are no longer idle: it goes to the next idle machine.
    for (let i = 1; i <= 4; i++) m.state.machines.get("a")!.queue.delete(`a-t${i}`);
    m.state.machines.get("a")!.queue.push("a-t5");
    m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(m.woken.get("d")).toBe(1);
    expect(m.woken.has("e")).toBe(false);
  });

  it("does not wake an idle machine the engine would not let take the work: dearer than its holder, paused, or full", () => {
    const m = market(
      machine("a", { queue: 5, price: 100n }),
      machine("dear", { price: 200n }),
      machine("paused", { paused: true }),
      machine("full", { leases: 2 }),
      machine("cheap", { price: 50n }),
    );
    m.idle("dear", "paused", "full", "cheap");
    m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(m.wokenIds()).toEqual(["a", "cheap"]);
  });

  it("wakes for spare work a machine that was offered work but leased nothing (others took it first)", () => {
    const m = market(machine("a", { queue: 3 }), machine("b"));
    m.routes.markIdle("b", false); // its stream offered work last
    m.routes.leasedNothing("b");
    m.routes.leasedNothing("none"); // a machine without a stream is never woken
    m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(m.wokenIds()).toEqual(["a", "b"]);
  });

  it("hears a machine's own change (resumed, departed) whether or not it was idle", () => {
    const m = market(machine("a"), machine("b"));
    m.routes.route({ kind: "machine", machineId: "b" });
    expect(m.wokenIds()).toEqual(["b"]);
  });

  it("looks at a bounded number of idle machines per event, however many there are", () => {
    const dear = Array.from({ length: 5 * MAX_IDLE_LOOKS }, (_, i) => machine(`dear${i}`, { price: 1000n }));
    const m = market(machine("a", { queue: 3 }), ...dear, machine("cheap", { price: 1n }));
    m.idle(...dear.map((d) => d.id), "cheap");
    let lookups = 0;
    const get = m.state.machines.get.bind(m.state.machines);
    m.state.machines.get = (id: string) => (lookups++, get(id));
    m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(lookups).toBeLessThanOrEqual(MAX_IDLE_LOOKS + 1);
    expect(m.wokenIds()).toEqual(["a"]);
    // Machines passed over go to the back: later events reach the ones behind them.
    for (let i = 0; i < 5 && !m.woken.has("cheap"); i++) m.routes.route({ kind: "queue", machineIds: ["a"] });
    expect(m.woken.has("cheap")).toBe(true);
  });
});

describe("leases sent on work streams", () => {
  const lease = (id: string) => ({ leaseId: id, taskId: `t-${id}`, jobId: "j", moduleHash: "h", args: [], stdin: "", limits: { wallMs: 1000, memoryPages: 1, outputBytes: 1 }, expiresAt: 0 });

  it("knows which machines' streams take leases, and how many at once", () => {
    const routes = new WorkRoutes({ state: new LiveState() });
    const stopPlain = routes.watch("a", () => {});
    expect(routes.streamLeaseMax("a")).toBe(0); // an older worker's stream: plain offers only
    const stopLeasing = routes.watch("a", () => {}, 8);
    expect(routes.streamLeaseMax("a")).toBe(8);
    stopLeasing();
    expect(routes.streamLeaseMax("a")).toBe(0);
    stopPlain();
  });

  it("wakes the machine's stream for leases made for it, hands them over once, and drops them when no stream is left", () => {
    const routes = new WorkRoutes({ state: new LiveState() });
    let wakes = 0;
    const stop = routes.watch("a", () => wakes++, 4);
    routes.push("a", [lease("1")]);
    routes.push("a", [lease("2")]);
    expect(wakes).toBe(2);
    expect(routes.takePushed("a").map((l) => l.leaseId)).toEqual(["1", "2"]);
    expect(routes.takePushed("a")).toEqual([]);
    routes.push("a", [lease("3")]);
    stop();
    // Nobody will send it: it expires as any lease whose worker never ran it.
    expect(routes.hasPushed("a")).toBe(false);
  });
});
