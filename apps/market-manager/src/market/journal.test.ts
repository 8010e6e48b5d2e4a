import { describe, expect, it } from "vitest";
import { Journal, MAX_IN_SEQUENCE, YIELD_PASSES } from "./journal.ts";

// The journal sends the hot steps' statements in the order they were decided (an admission
// yielding to the reports and leases decided while it waits), a few at once on one connection that
// runs them in turn, and moves memory for each in the order sent: what a worker is told, and what
// kill -9 can leave, is always a prefix of that order.

const tick = () => new Promise((r) => setImmediate(r));

function deferred() {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("the journal", () => {
  it("sends entries in order without waiting for answers, up to MAX_IN_SEQUENCE, and applies them in that order", async () => {
    const journal = new Journal(() => {});
    const log: string[] = [];
    const gates = Array.from({ length: MAX_IN_SEQUENCE + 1 }, () => deferred());
    gates.forEach((gate, i) =>
      journal.add({ kind: "test", write: () => (log.push(`write ${i + 1}`), gate.promise), applied: () => log.push(`applied ${i + 1}`), failed: () => log.push(`failed ${i + 1}`) }),
    );
    await tick();
    expect(log).toEqual(gates.slice(0, MAX_IN_SEQUENCE).map((_, i) => `write ${i + 1}`));
    expect(journal.waiting).toBe(1);
    // The second answered first (it cannot be, on one connection; the order of applying holds anyway).
    gates[1]!.resolve();
    await tick();
    expect(log).not.toContain("applied 2");
    gates[0]!.resolve();
    await tick();
    expect(log.slice(MAX_IN_SEQUENCE)).toEqual(["applied 1", "applied 2", `write ${MAX_IN_SEQUENCE + 1}`]);
    for (const gate of gates) gate.resolve();
    await journal.idle();
    expect(log.filter((l) => l.startsWith("applied"))).toEqual(gates.map((_, i) => `applied ${i + 1}`));
    expect(journal.busy).toBe(false);
  });

  it("starts an entry added while others are applied only once all of them are", async () => {
    const journal = new Journal(() => {});
    const log: string[] = [];
    const gates = [deferred(), deferred()];
    journal.add({
      kind: "test",
      write: () => gates[0]!.promise,
      applied: () => {
        log.push("applied 1");
        journal.add({ kind: "test", write: async () => void log.push("write 3"), applied: () => log.push("applied 3"), failed: () => {} });
      },
      failed: () => {},
    });
    journal.add({ kind: "test", write: () => gates[1]!.promise, applied: () => log.push("applied 2"), failed: () => {} });
    gates[1]!.resolve();
    gates[0]!.resolve();
    await journal.idle();
    expect(log).toEqual(["applied 1", "applied 2", "write 3", "applied 3"]);
  });

  it("goes on past an entry that failed, and waits for entries an applied entry adds", async () => {
    const journal = new Journal(() => {});
    const log: string[] = [];
    journal.add({ kind: "test", write: () => Promise.reject(new Error("no")), applied: () => log.push("applied 1"), failed: (e) => log.push(`failed 1: ${(e as Error).message}`) });
    journal.add({
      kind: "test",
      write: async () => 2,
      applied: (n) => {
        log.push(`applied ${n}`);
        journal.add({ kind: "test", write: async () => 3, applied: (m) => log.push(`applied ${m}`), failed: () => {} });
      },
      failed: () => {},
    });
    await journal.idle();
    expect(log).toEqual(["failed 1: no", "applied 2", "applied 3"]);
  });

  it("says when the next group may be decided: once no entry waits to start and at most one is written", async () => {
    const journal = new Journal(() => {});
    const gates = [deferred(), deferred()];
    journal.add({ kind: "test", write: () => gates[0]!.promise, applied: () => {}, failed: () => {} });
    journal.add({ kind: "test", write: () => gates[1]!.promise, applied: () => {}, failed: () => {} });
    let ready = false;
    journal.whenRoom(() => (ready = true));
    await tick();
    expect(ready).toBe(false); // a group's two statements are being written
    gates[0]!.resolve();
    await tick();
    expect(ready).toBe(true); // the second one runs: the next group is sent behind it
    gates[1]!.resolve();
    let atOnce = false;
    await journal.idle();
    journal.whenRoom(() => (atOnce = true));
    expect(atOnce).toBe(true);
  });

  it("sends reports decided while an admission waits ahead of it, YIELD_PASSES of them at most, and applies in the order sent", async () => {
    const journal = new Journal(() => {});
    const sent: string[] = [];
    const applied: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const add = (name: string, yields = false) => {
      const gate = deferred();
      gates.set(name, gate);
      journal.add({ kind: yields ? "admission" : "reports", yields, write: () => (sent.push(name), gate.promise), applied: () => applied.push(name), failed: () => {} });
    };
    const first = Array.from({ length: MAX_IN_SEQUENCE }, (_, i) => `r${i + 1}`);
    const later = Array.from({ length: YIELD_PASSES + 1 }, (_, i) => `r${MAX_IN_SEQUENCE + i + 1}`);
    for (const name of first) add(name);
    add("admission", true);
    for (const name of later) add(name);
    // The connection is full: every later entry waits, the admission among them.
    expect(journal.waiting).toBe(later.length + 1);
    // The connection answers in the order it was sent, one statement at a time.
    for (let answered = 0; answered < gates.size; answered++) {
      gates.get(sent[answered]!)!.resolve();
      await tick();
    }
    await journal.idle();
    // The reports decided after the admission went first, YIELD_PASSES of them; then the admission, then the rest.
    expect(sent).toEqual([...first, ...later.slice(0, YIELD_PASSES), "admission", ...later.slice(YIELD_PASSES)]);
    expect(applied).toEqual(sent);
  });

  it("decides the next group of reports while admissions wait, once at most one report statement is written", async () => {
    const journal = new Journal(() => {});
    const gates = Array.from({ length: 4 }, () => deferred());
    journal.add({ kind: "reports", write: () => gates[0]!.promise, applied: () => {}, failed: () => {} });
    journal.add({ kind: "reports", write: () => gates[1]!.promise, applied: () => {}, failed: () => {} });
    journal.add({ kind: "admission", yields: true, write: () => gates[2]!.promise, applied: () => {}, failed: () => {} });
    journal.add({ kind: "admission", yields: true, write: () => gates[3]!.promise, applied: () => {}, failed: () => {} });
    let ready = false;
    journal.whenRoom(() => (ready = true));
    expect(journal.waiting).toBe(1); // the second admission: the connection holds MAX_IN_SEQUENCE
    expect(ready).toBe(false); // two report statements are being written
    gates[0]!.resolve();
    await tick();
    // One report statement is written, beside the admissions: the next group is decided now.
    expect(ready).toBe(true);
    for (const gate of gates) gate.resolve();
    await journal.idle();
  });

  it("tells its observer how long each entry waited to be sent and how long its statement took, by kind", async () => {
    const journal = new Journal(() => {});
    const told: [string, string, number][] = [];
    journal.observe = (kind, stage, seconds) => told.push([kind, stage, seconds]);
    const gates = Array.from({ length: MAX_IN_SEQUENCE + 1 }, () => deferred());
    gates.forEach((gate, i) => journal.add({ kind: i === MAX_IN_SEQUENCE ? "admission" : "reports", write: () => gate.promise, applied: () => {}, failed: () => {} }));
    // The last one waits for a place on the connection while the first is written for 50 ms.
    await new Promise((r) => setTimeout(r, 50));
    gates[0]!.resolve();
    for (const gate of gates) gate.resolve();
    await journal.idle();
    expect(told.filter(([, stage]) => stage === "wait").map(([kind]) => kind)).toEqual([...gates.slice(1).map(() => "reports"), "admission"]);
    expect(told.filter(([, stage]) => stage === "write")).toHaveLength(gates.length);
    const [, , firstWrite] = told.find(([kind, stage]) => kind === "reports" && stage === "write")!;
    const [, , lastWait] = told.find(([kind, stage]) => kind === "admission" && stage === "wait")!;
    expect(firstWrite).toBeGreaterThanOrEqual(0.045);
    expect(lastWait).toBeGreaterThanOrEqual(0.045);
  });

  it("keeps going when memory cannot follow an entry, and says so", async () => {
    const said: string[] = [];
    const journal = new Journal((line) => said.push(line));
    const log: string[] = [];
    journal.add({ kind: "test", write: async () => {}, applied: () => { throw new Error("defect"); }, failed: () => {} });
    journal.add({ kind: "test", write: async () => {}, applied: () => log.push("applied 2"), failed: () => {} });
    await journal.idle();
    expect(log).toEqual(["applied 2"]);
    expect(said.join("\n")).toMatch(/apply failed: .*defect/);
  });
});
