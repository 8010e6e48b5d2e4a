import { describe, expect, it } from "vitest";
import { Market, STEP_SLICE_MS } from "./market.ts";
import type { Database, Db } from "../db/client.ts";
import type { Engine } from "./engine.ts";
import type { ManagerSettings } from "./market.ts";

// The market's steps run one at a time; a burst of them (submissions arriving together, each
// decided on the lock) still lets the event loop read what arrived every few milliseconds: a
// heartbeat, a /healthz, a new connection are not held for the whole burst.

const market = () =>
  new Market({ db: {} as Db } as Database, {} as Engine, { now: () => Date.now() }, () => {}, { leaseTimeoutMs: 30_000, startingCreditsMicro: 0n, terms: {} as ManagerSettings["terms"], maxDelayMs: 60_000 });

/** Keeps the thread busy, as a decision does. */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("the market's steps", () => {
  it("run in the order they were queued, and a burst of them lets the event loop in every few milliseconds", async () => {
    const m = market();
    const order: number[] = [];
    const between: number[] = [];
    // A call that arrives while the burst runs: its callback runs at the loop's next turn.
    setImmediate(() => between.push(order.length));
    const steps = Array.from({ length: 40 }, (_, i) => m.pipelined(() => (busy(1), order.push(i), i)));
    expect(await Promise.all(steps)).toEqual(order);
    expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
    // Read after about STEP_SLICE_MS of steps, not after all forty.
    expect(between).toHaveLength(1);
    expect(between[0]).toBeGreaterThan(0);
    expect(between[0]).toBeLessThanOrEqual(STEP_SLICE_MS + 2);
  });
});
