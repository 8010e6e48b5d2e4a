// The pool's handling of threads, with stand-in threads whose answers the test controls.
import { describe, expect, it } from "vitest";
import { MESSAGE_VERSION, type HostToThread } from "./messages.ts";
import { EMPTY_OUTPUT_HASH } from "./sandbox.ts";
import { ThreadPool, type ThreadEvents } from "./thread-pool.ts";
import { wat } from "./testing/fixtures.ts";

interface StandIn {
  events: ThreadEvents;
  posted: HostToThread[];
  terminated: boolean;
}

function standInPool(slots: number, options?: { spareThread?: boolean }) {
  const threads: StandIn[] = [];
  const pool = new ThreadPool(slots, (events) => {
    const t: StandIn = { events, posted: [], terminated: false };
    threads.push(t);
    queueMicrotask(() => events.message({ version: MESSAGE_VERSION, type: "ready" }));
    return { post: (m) => t.posted.push(m), terminate: () => void (t.terminated = true) };
  }, options);
  return { pool, threads };
}

const module = wat(`(module (memory (export "memory") 1) (func (export "_start")))`);
const request = (wallMs: number) => ({ moduleHash: "h", module, args: [], seed: "s", limits: { wallMs, memoryPages: 16, outputBytes: 64 } });
const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
};

const result = { exitCode: 0, stdout: new Uint8Array(0), stderr: new Uint8Array(0), outputHash: EMPTY_OUTPUT_HASH, elapsedMs: 1 };
const answer = (thread: StandIn, index = 0) => {
  const run = thread.posted[index]! as Extract<HostToThread, { type: "run" }>;
  thread.events.message({ version: MESSAGE_VERSION, type: "result", runId: run.runId, outcome: result });
};

describe("ThreadPool", () => {
  it("stops a thread at its wall time and gives the slot the spare thread, already loaded; a new spare loads; the other slots are left alone", async () => {
    const { pool, threads } = standInPool(2);
    pool.warm(); // slot 0: threads[0], slot 1: threads[1], spare: threads[2]
    expect(threads).toHaveLength(3);
    await new Promise((r) => setTimeout(r, 0)); // every thread has said it is ready
    const slow = pool.run(request(50));
    const other = pool.run(request(10_000));
    await until(() => threads[0]!.posted.length === 1 && threads[1]!.posted.length === 1);
    const outcome = await slow;
    expect(outcome.error?.code).toBe("timeout");
    expect(threads[0]!.terminated).toBe(true);
    expect(threads[1]!.terminated).toBe(false);

    // The slot's next task goes to the former spare at once: no thread loads on its way.
    const next = pool.run(request(10_000));
    await until(() => threads[2]!.posted.length === 1);
    expect(threads[2]!.posted[0]!.type).toBe("run");
    expect(threads).toHaveLength(3);
    await until(() => threads.length === 4); // the next spare, before any new task asked for it
    answer(threads[2]!);
    answer(threads[1]!);
    expect((await next).exitCode).toBe(0);
    expect((await other).exitCode).toBe(0);
    await pool.close();
    expect(threads.every((t) => t.terminated)).toBe(true);
    expect(threads).toHaveLength(4); // a closed pool starts nothing
  });

  it("starts every slot's thread and one spare when warmed, before any task", () => {
    const { pool, threads } = standInPool(3);
    pool.warm();
    expect(threads).toHaveLength(4);
    pool.warm();
    expect(threads).toHaveLength(4);
    void pool.close();
  });

  it("replaces a thread that died with the spare and reports its task as crashed", async () => {
    const { pool, threads } = standInPool(1);
    const run = pool.run(request(10_000)); // threads[0] runs it, threads[1] is the spare
    await until(() => threads[0]?.posted.length === 1);
    threads[0]!.events.error(new Error("out of memory"));
    const outcome = await run;
    expect(outcome.error).toEqual({ code: "crashed", message: "the sandbox thread died: out of memory" });
    await until(() => threads.length === 3);
    expect(threads).toHaveLength(3);
    const next = pool.run(request(10_000));
    await until(() => threads[1]!.posted.length === 1);
    answer(threads[1]!);
    expect((await next).exitCode).toBe(0);
    await pool.close();
  });

  it("drops a spare that died without starting another until a slot takes a thread", async () => {
    const { pool, threads } = standInPool(1);
    pool.warm();
    threads[1]!.events.error(new Error("could not load"));
    expect(threads).toHaveLength(2);
    const run = pool.run(request(50));
    expect((await run).error?.code).toBe("timeout");
    expect(threads).toHaveLength(3); // the slot's new thread
    await until(() => threads.length === 4); // and, soon after, a new spare
    expect(threads).toHaveLength(4);
    await pool.close();
  });

  it("keeps a task that finds every slot busy until one frees, says when it starts, and tells the last one's end first", async () => {
    const { pool, threads } = standInPool(1, { spareThread: false });
    pool.warm();
    const order: string[] = [];
    const first = pool.run(request(10_000), undefined, () => order.push("first started"));
    const second = pool.run(request(10_000), undefined, () => order.push("second started"));
    void first.then(() => order.push("first ended"));
    await until(() => threads[0]!.posted.length === 1);
    expect(order).toEqual(["first started"]);
    answer(threads[0]!, 0);
    await until(() => threads[0]!.posted.length === 2);
    expect(order).toEqual(["first started", "first ended", "second started"]);
    answer(threads[0]!, 1);
    expect((await second).exitCode).toBe(0);
    await pool.close();
  });

  it("starts a successor itself when made without a spare", async () => {
    const { pool, threads } = standInPool(1, { spareThread: false });
    pool.warm();
    expect(threads).toHaveLength(1);
    expect((await pool.run(request(50))).error?.code).toBe("timeout");
    expect(threads).toHaveLength(2);
    await pool.close();
  });
});
