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

function standInPool(slots: number) {
  const threads: StandIn[] = [];
  const pool = new ThreadPool(slots, (events) => {
    const t: StandIn = { events, posted: [], terminated: false };
    threads.push(t);
    queueMicrotask(() => events.message({ version: MESSAGE_VERSION, type: "ready" }));
    return { post: (m) => t.posted.push(m), terminate: () => void (t.terminated = true) };
  });
  return { pool, threads };
}

const module = wat(`(module (memory (export "memory") 1) (func (export "_start")))`);
const request = (wallMs: number) => ({ moduleHash: "h", module, args: [], seed: "s", limits: { wallMs, memoryPages: 16, outputBytes: 64 } });
const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
};

describe("ThreadPool", () => {
  it("starts a replacement as soon as it stops a thread at its wall time, and leaves the other slots alone", async () => {
    const { pool, threads } = standInPool(2);
    const slow = pool.run(request(50));
    const other = pool.run(request(10_000));
    await until(() => threads.length === 2 && threads.every((t) => t.posted.length === 1));
    const outcome = await slow;
    expect(outcome.error?.code).toBe("timeout");
    expect(threads[0]!.terminated).toBe(true);
    expect(threads).toHaveLength(3); // the replacement, before any new task asked for it
    expect(threads[1]!.terminated).toBe(false);

    const run = threads[1]!.posted[0]! as Extract<HostToThread, { type: "run" }>;
    const result = { exitCode: 0, stdout: new Uint8Array(0), stderr: new Uint8Array(0), outputHash: EMPTY_OUTPUT_HASH, elapsedMs: 1 };
    threads[1]!.events.message({ version: MESSAGE_VERSION, type: "result", runId: run.runId, outcome: result });
    expect((await other).exitCode).toBe(0);
    await pool.close();
    expect(threads).toHaveLength(3); // a closed pool starts nothing
  });

  it("starts every slot's thread when warmed, before any task", () => {
    const { pool, threads } = standInPool(3);
    pool.warm();
    expect(threads).toHaveLength(3);
    pool.warm();
    expect(threads).toHaveLength(3);
    void pool.close();
  });

  it("replaces a thread that died and reports its task as crashed", async () => {
    const { pool, threads } = standInPool(1);
    const run = pool.run(request(10_000));
    await until(() => threads[0]?.posted.length === 1);
    threads[0]!.events.error(new Error("out of memory"));
    const outcome = await run;
    expect(outcome.error).toEqual({ code: "crashed", message: "the sandbox thread died: out of memory" });
    expect(threads).toHaveLength(2);
    await pool.close();
  });
});
