import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createContext } from "./context.ts";
import { infeasibility, type Estimate } from "./feasibility.ts";
import { machineCredits } from "./scoring.ts";
import { cheapestMachine, emptyExclusions } from "./selection.ts";
import { market, opp } from "../test-fixtures.ts";

/** The cheapest feasible machine's cost by looking at every one of the first `rows` machines (Infinity if none fits): what the index must agree with. */
function cheapestByScan(ctx: ReturnType<typeof createContext>, task: Parameters<typeof machineCredits>[2], rows: number) {
  let best = Infinity;
  const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
  for (let row = 0; row < rows; row++) {
    if (infeasibility(ctx, row, task, Infinity, undefined, est)) continue;
    best = Math.min(best, machineCredits(ctx, row, task, est.backlogSeconds));
  }
  return best;
}

describe("cheapestMachine", () => {
  it("finds the same cost as scanning every machine, while inspecting fewer (property)", () => {
    let inspectedTotal = 0;
    let machinesTotal = 0;
    fc.assert(
      fc.property(
        fc.array(fc.record({ speed: fc.double({ min: 0.2, max: 4, noNaN: true }), slots: fc.integer({ min: 1, max: 8 }), price: fc.double({ min: 0, max: 0.1, noNaN: true }), load: fc.double({ min: 0, max: 150, noNaN: true }), mem: fc.integer({ min: 100, max: 4000 }) }), { minLength: 1, maxLength: 200 }),
        fc.double({ min: 0.1, max: 50, noNaN: true }),
        fc.integer({ min: 0, max: 3000 }),
        fc.double({ min: 0, max: 60, noNaN: true }),
        (ms, work, memoryMb, later) => {
          const s = market(ms.map((m, i) => opp(`m${i}`, { speed: m.speed, slots: m.slots, pricePerSecond: m.price, memoryPerSlotMb: m.mem })));
          ms.forEach((m, i) => {
            s.assignTask({ id: `t${i}`, jobId: "bg", work: m.load * m.speed, memoryMb: 0, bytes: 0 }, `m${i}`, 0);
            s.taskStarted(`t${i}`, 0);
          });
          // Decide a little later, when keys have drained since the index was built.
          const ctx = createContext(s, 0);
          const late = { ...ctx, now: later, pruneFactor: Math.exp(-ctx.lnN * later / ctx.H) };
          const task = { id: "x", work, memoryMb, bytes: 0 };
          const why = emptyExclusions();
          const got = cheapestMachine(late, task, Infinity, undefined, why);
          const best = cheapestByScan(late, task, ms.length);
          if (best === Infinity) expect(got).toBeUndefined();
          else expect(got!.cost).toBeCloseTo(best, 9);
          inspectedTotal += why.inspected;
          machinesTotal += ms.length;
        },
      ),
      { numRuns: 300 },
    );
    expect(inspectedTotal).toBeLessThan(machinesTotal);
  });

  it("finds the cheapest machine at once after known machines change their price, speed or availability, without rebuilding the index (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ price: fc.double({ min: 0, max: 0.1, noNaN: true }), load: fc.double({ min: 0, max: 50, noNaN: true }) }), { minLength: 2, maxLength: 60 }),
        fc.array(fc.record({ which: fc.nat(), price: fc.double({ min: 0, max: 0.1, noNaN: true }), speed: fc.double({ min: 0.2, max: 4, noNaN: true }), available: fc.boolean() }), { minLength: 1, maxLength: 10 }),
        (ms, changes) => {
          const s = market(ms.map((m, i) => opp(`m${i}`, { pricePerSecond: m.price })));
          ms.forEach((m, i) => s.assignTask({ id: `t${i}`, jobId: "bg", work: m.load, memoryMb: 0, bytes: 0 }, `m${i}`, 0));
          createContext(s, 0); // the index is built
          for (const c of changes) {
            const i = c.which % ms.length;
            s.upsertMachine(opp(`m${i}`, { pricePerSecond: c.price, speed: c.speed, available: c.available }), 1);
          }
          const ctx = createContext(s, 1);
          const task = { id: "x", work: 1, memoryMb: 0, bytes: 0 };
          const got = cheapestMachine(ctx, task, Infinity, undefined, emptyExclusions());
          const best = cheapestByScan(ctx, task, ms.length);
          if (best === Infinity) expect(got).toBeUndefined();
          else expect(got!.cost).toBeCloseTo(best, 9);
        },
      ),
      { numRuns: 200 },
    );
  });
});
