import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TaskTable } from "./task-table.ts";

describe("TaskTable", () => {
  it("holds the same tasks as a Map would, in the same order, through adds, moves and removals (property)", () => {
    // Ids that share prefixes, wide characters, ids at the length limit, and ids used again after they left.
    const idArb = fc.oneof(
      fc.integer({ min: 0, max: 300 }).map((k) => `t${k}`),
      fc.integer({ min: 0, max: 20 }).map((k) => `задача-${k}`),
      fc.integer({ min: 0, max: 5 }).map((k) => `${"x".repeat(190)}${k}`),
      fc.string({ minLength: 1, maxLength: 12 }),
    );
    const op = fc.oneof(
      { weight: 5, arbitrary: fc.record({ kind: fc.constant("add" as const), id: idArb, machine: fc.nat(9), job: fc.nat(4), work: fc.double({ min: 0.1, max: 100, noNaN: true }) }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("move" as const), at: fc.nat(), to: fc.nat(9) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("start" as const), at: fc.nat(), t: fc.double({ min: 0, max: 50, noNaN: true }) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("ask" as const), id: idArb, machine: fc.nat(9) }) },
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 50, maxLength: 2000, size: "max" }), (ops) => {
        const table = new TaskTable();
        table.machines(10);
        const model = new Map<string, { jobId: string; machine: number; work: number; startedAt: number }>();
        const lists: string[][] = Array.from({ length: 10 }, () => []);
        for (const o of ops) {
          const ids = [...model.keys()];
          if (o.kind === "add") {
            if (model.has(o.id)) continue;
            table.add({ id: o.id, jobId: `j${o.job}`, work: o.work, memoryMb: o.job, bytes: o.machine }, o.machine);
            model.set(o.id, { jobId: `j${o.job}`, machine: o.machine, work: o.work, startedAt: NaN });
            lists[o.machine]!.unshift(o.id);
          } else if (o.kind === "ask") {
            expect(table.has(o.id)).toBe(model.has(o.id));
            expect(table.on(o.machine).map((k) => table.idOf(k))).toEqual(lists[o.machine]);
          } else if (ids.length > 0) {
            const id = ids[o.at % ids.length]!;
            const t = model.get(id)!;
            const k = table.indexOf(id);
            if (o.kind === "remove") {
              table.remove(k);
              model.delete(id);
              lists[t.machine]!.splice(lists[t.machine]!.indexOf(id), 1);
            } else if (o.kind === "move") {
              table.move(k, o.to);
              lists[t.machine]!.splice(lists[t.machine]!.indexOf(id), 1);
              lists[o.to]!.unshift(id);
              t.machine = o.to;
            } else {
              table.startedAt[k] = o.t;
              t.startedAt = o.t;
            }
          }
        }
        expect(table.size).toBe(model.size);
        expect([...table.keys()]).toEqual([...model.keys()]);
        expect([...table.values()]).toEqual([...model].map(([id, t]) => ({
          id, jobId: t.jobId, machine: t.machine, work: t.work, memoryMb: Number(t.jobId.slice(1)), bytes: expect.any(Number),
          running: !Number.isNaN(t.startedAt), startedAt: Number.isNaN(t.startedAt) ? 0 : t.startedAt,
        })));
        for (let m = 0; m < 10; m++) expect(table.on(m).map((k) => table.idOf(k))).toEqual(lists[m]);
      }),
      { numRuns: 200 },
    );
  });
});
