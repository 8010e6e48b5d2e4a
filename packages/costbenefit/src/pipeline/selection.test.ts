import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createContext } from "./context.ts";
import { infeasibility, type Estimate } from "./feasibility.ts";
import { machineCredits } from "./scoring.ts";
import { cheapestMachine, emptyExclusions } from "./selection.ts";
import { market, opp } from "../test-fixtures.ts";
import type { MachineProfileInput } from "../machine.ts";
import type { SearchContext } from "./context.ts";
import type { TaskShape } from "./feasibility.ts";
import type { Choice } from "./selection.ts";

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
          // Decide a little later, when backlogs have drained since the index was brought up to date.
          const ctx = createContext(s, 0);
          const late = { ...ctx, now: later };
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

  it("chooses exactly the machine a full scan chooses, on random markets as their loads, profiles and machines change (property)", () => {
    // Every feasible machine costed, the cheapest kept, ties to the lowest row: what the index must give.
    const scan = (ctx: SearchContext, task: TaskShape, deadlineAt: number, excluded: ReadonlySet<number> | undefined): Choice | undefined => {
      const m = ctx.state.machines;
      const est: Estimate = { finishAt: 0, backlogSeconds: 0, startsNow: false };
      let best: Choice | undefined;
      for (let row = 0; row < m.end; row++) {
        if (!m.live(row) || infeasibility(ctx, row, task, deadlineAt, excluded, est)) continue;
        const cost = machineCredits(ctx, row, task, est.backlogSeconds);
        if (!best || cost < best.cost || (cost === best.cost && row < best.row)) best = { row, cost, finishAt: est.finishAt, startsNow: est.startsNow };
      }
      return best;
    };
    const machineArb = fc.record({
      dedicated: fc.boolean(),
      speed: fc.oneof(fc.constantFrom(0.5, 1, 2), fc.double({ min: 0.2, max: 4, noNaN: true })),
      slots: fc.integer({ min: 1, max: 4 }),
      memoryPerSlotMb: fc.constantFrom(128, 512, 2048),
      bandwidthBytesPerSecond: fc.constantFrom(1e6, 1e8),
      pricePerSecond: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.05, noNaN: true })),
      reputation: fc.constantFrom(1, 1, 0.5),
      available: fc.constantFrom(true, true, true, false),
      departureAt: fc.double({ min: 5, max: 400, noNaN: true }),
      // Twins (the same profile on several machines) tie on cost: the lowest row must win.
      copies: fc.constantFrom(1, 1, 1, 2, 4),
    });
    type Spec = fc.Arbitrary<typeof machineArb extends fc.Arbitrary<infer T> ? T : never>;
    const profileOf = (m: Spec extends fc.Arbitrary<infer T> ? T : never, id: string): MachineProfileInput =>
      m.dedicated
        ? { id, kind: "dedicated", slots: m.slots, speed: m.speed, memoryPerSlotMb: m.memoryPerSlotMb, bandwidthBytesPerSecond: m.bandwidthBytesPerSecond, reputation: m.reputation, available: m.available, contractPrice: 1, departureAt: m.departureAt }
        : opp(id, { slots: m.slots, speed: m.speed, memoryPerSlotMb: m.memoryPerSlotMb, bandwidthBytesPerSecond: m.bandwidthBytesPerSecond, reputation: m.reputation, available: m.available, pricePerSecond: m.pricePerSecond });
    const op = fc.oneof(
      { weight: 6, arbitrary: fc.record({ kind: fc.constant("assign" as const), at: fc.nat(), work: fc.double({ min: 0.1, max: 300, noNaN: true }), memoryMb: fc.constantFrom(0, 30, 200, 1000), bytes: fc.constantFrom(0, 1e5), start: fc.boolean() }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant("finish" as const), at: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("move" as const), at: fc.nat(), to: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("backlog" as const), at: fc.nat(), work: fc.double({ min: 0, max: 300, noNaN: true }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("profile" as const), at: fc.nat(), machine: machineArb }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("leave" as const), at: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("join" as const), machine: machineArb }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("wait" as const), seconds: fc.double({ min: 0, max: 60, noNaN: true }) }) },
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant("decide" as const),
          work: fc.oneof(fc.double({ min: 0.01, max: 400, noNaN: true }), fc.constantFrom(1, 10)),
          memoryMb: fc.constantFrom(0, 0, 50, 300, 3000),
          bytes: fc.constantFrom(0, 1e6),
          deadline: fc.oneof(fc.constant(Infinity), fc.double({ min: 0, max: 400, noNaN: true })),
          bounded: fc.boolean(),
          minReputation: fc.constantFrom(0, 0, 0.8),
          // Tentative placements of the plan being built, and replicas' machines ruled out.
          overlay: fc.array(fc.record({ at: fc.nat(), work: fc.double({ min: 0, max: 100, noNaN: true }), memoryMb: fc.constantFrom(0, 100) }), { maxLength: 4 }),
          excluded: fc.array(fc.nat(), { maxLength: 3 }),
        }),
      },
    );
    let decisions = 0;
    let found = 0;
    fc.assert(
      fc.property(fc.array(machineArb, { minLength: 1, maxLength: 150, size: "medium" }), fc.array(op, { minLength: 20, maxLength: 80 }), (specs, ops) => {
        let serial = 0;
        const s = market([], { horizonSeconds: 200, maxCandidatesPerTask: 1_000_000 });
        const join = (m: (typeof specs)[number], now: number) => {
          for (let c = 0; c < m.copies; c++) s.upsertMachine(profileOf(m, `m${serial++}`), now);
        };
        for (const m of specs) join(m, 0);
        let now = 0;
        let tasks = 0;
        const live = () => [...s.tasks.keys()];
        const machines = () => [...s.machines.rowById.keys()];
        for (const o of ops) {
          const ids = machines();
          if (o.kind === "wait") now += o.seconds;
          else if (o.kind === "join") join(o.machine, now);
          else if (o.kind === "decide") {
            if (ids.length === 0) continue;
            const ctx = createContext(s, now, o.minReputation);
            ctx.bounded = o.bounded;
            for (const a of o.overlay) ctx.overlay.add(s.rowOf(ids[a.at % ids.length]!)!, a.work, a.memoryMb, 0);
            const excluded = o.excluded.length ? new Set(o.excluded.map((k) => s.rowOf(ids[k % ids.length]!)!)) : undefined;
            const task = { id: "x", work: o.work, memoryMb: o.memoryMb, bytes: o.bytes };
            const deadline = now + o.deadline;
            const want = scan(ctx, task, deadline, excluded);
            expect(cheapestMachine(ctx, task, deadline, excluded, emptyExclusions())).toEqual(want);
            decisions++;
            if (want) found++;
          } else if (o.kind === "assign") {
            if (ids.length === 0) continue;
            const id = `t${tasks++}`;
            s.assignTask({ id, jobId: `j${tasks % 3}`, work: o.work, memoryMb: o.memoryMb, bytes: o.bytes }, ids[o.at % ids.length]!, now);
            if (o.start) s.taskStarted(id, now);
          } else if (o.kind === "finish" || o.kind === "move") {
            const t = live();
            if (t.length === 0) continue;
            if (o.kind === "finish") s.taskFinished(t[o.at % t.length]!, now, 1);
            else s.moveTask(t[o.at % t.length]!, ids[o.to % ids.length]!, now);
          } else if (o.kind === "backlog") {
            if (ids.length) s.reportBacklog(ids[o.at % ids.length]!, o.work, now);
          } else if (o.kind === "profile") {
            if (ids.length) s.upsertMachine(profileOf(o.machine, ids[o.at % ids.length]!), now);
          } else if (ids.length) s.removeMachine(ids[o.at % ids.length]!, now);
        }
      }),
      { numRuns: 300 },
    );
    // The runs compared many decisions, most of which found a machine.
    expect(decisions).toBeGreaterThan(2000);
    expect(found).toBeGreaterThan(decisions / 3);
  }, 120_000);
});
