import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TaskQueue } from "./task-queue.ts";

describe("a machine's task queue", () => {
  it("hands tasks out in the order they were queued, whatever left it and from where", () => {
    // Weighted so queues grow long and holes pile up: the queue packs itself now and then.
    const op = fc.oneof(
      { arbitrary: fc.record({ push: fc.integer({ min: 0, max: 150 }) }), weight: 5 },
      { arbitrary: fc.record({ drop: fc.integer({ min: 0, max: 150 }) }), weight: 3 },
      { arbitrary: fc.record({ front: fc.integer({ min: 1, max: 40 }) }), weight: 1 },
      { arbitrary: fc.record({ back: fc.integer({ min: 0, max: 160 }) }), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 200, maxLength: 1000 }), (ops) => {
        const q = new TaskQueue();
        let model: string[] = [];
        for (const o of ops) {
          if ("push" in o) {
            const id = `t${o.push}`;
            q.push(id);
            if (!model.includes(id)) model.push(id);
          } else if ("drop" in o) {
            const id = `t${o.drop}`;
            expect(q.delete(id)).toBe(model.includes(id));
            model = model.filter((x) => x !== id);
          } else if ("front" in o) {
            // A lease taking the first tasks.
            const taken = [...q].slice(0, o.front);
            for (const id of taken) q.delete(id);
            expect(taken).toEqual(model.slice(0, o.front));
            model = model.slice(o.front);
          } else {
            // An idle machine taking spare tasks from the back, past the first `back`.
            expect([...q.fromBack(o.back)]).toEqual(model.slice(o.back).reverse());
          }
          expect(q.length).toBe(model.length);
          expect([...q]).toEqual(model);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("hands a long queue out in order, 32 tasks at a time from the front", () => {
    const q = TaskQueue.of(Array.from({ length: 200_000 }, (_, i) => `t${i}`));
    // 6,250 leases of 32 tasks: with an array each moved the rest of the queue down (about 6 * 10^8 moves).
    let next = 0;
    while (q.length) {
      let n = 0;
      for (const id of q) {
        expect(id).toBe(`t${next + n}`);
        if (++n === 32) break;
      }
      for (let i = 0; i < n; i++) q.delete(`t${next + i}`);
      next += n;
    }
    expect(next).toBe(200_000);
    expect([...q]).toEqual([]);
  });
});
