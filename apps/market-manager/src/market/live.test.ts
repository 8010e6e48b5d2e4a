import { describe, expect, it } from "vitest";
import { LiveState, type LiveJob, type LiveMachine, type LiveTask } from "./live.ts";
import { TaskQueue } from "./task-queue.ts";

// A small deterministic generator: the same sequence on every run, many shapes of it.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const machine = (id: string) => ({ id, queue: new TaskQueue(), leases: new Set<string>() }) as unknown as LiveMachine;
const task = (id: string, jobId: string, replica = 0): LiveTask => ({ id, jobId, index: 0, replica, bytes: 0, machineId: null, state: "pending", attempts: 0 });

describe("LiveState's index of each job's tasks", () => {
  it("matches a scan of every task after any sequence of joins, replacements, removals and dropped jobs (and so do the pending tasks)", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = rng(seed);
      const state = new LiveState();
      const jobs = ["a", "b", "c", "d"];
      // Two jobs the engine delayed, one it admitted, one not live (its tasks count as the engine's).
      const live = () => state.jobs.set("a", { id: "a", status: "delayed" } as LiveJob).set("b", { id: "b", status: "admitted" } as LiveJob).set("c", { id: "c", status: "delayed" } as LiveJob);
      let next = 0;
      for (let step = 0; step < 2000; step++) {
        if (step % 100 === 0) live(); // dropJob takes a job out of the market; it comes back now and then
        const r = random();
        const jobId = jobs[Math.floor(random() * jobs.length)]!;
        const ids = [...state.tasks.keys()];
        const some = ids[Math.floor(random() * ids.length)];
        const fresh = `t${next++}`;
        if (r < 0.5) state.tasks.set(fresh, { ...task(fresh, jobId), state: random() < 0.5 ? "pending" : "queued" });
        else if (r < 0.55 && some) state.tasks.set(some, { ...state.tasks.get(some)!, replica: 1 }); // the same task again
        else if (r < 0.6 && some) state.tasks.set(some, task(some, jobId, 1)); // the same id again, maybe another job's
        else if (r < 0.85 && some) state.tasks.delete(some);
        else if (r < 0.95) state.dropJob(jobId);
        else if (r < 0.97) state.tasks.delete("never-there");
        else state.tasks.clear();
        for (const j of jobs) {
          expect(state.tasks.ofJob(j), `seed ${seed} step ${step} job ${j}`).toEqual([...state.tasks.values()].filter((t) => t.jobId === j));
        }
        expect(new Set(state.tasks.jobIds())).toEqual(new Set([...state.tasks.values()].map((t) => t.jobId)));
        const pending = (t: LiveTask) => t.state === "pending" && state.jobs.get(t.jobId)?.status !== "delayed";
        expect(new Set(state.pendingTasks())).toEqual(new Set([...state.tasks.values()].filter(pending)));
        expect(state.hasPendingTasks(), `seed ${seed} step ${step}`).toBe([...state.tasks.values()].some(pending));
      }
    }
  });

  it("takes queued tasks out of their machines' queues, keeping the others in order", () => {
    const state = new LiveState();
    const m1 = machine("m1");
    const m2 = machine("m2");
    state.machines.set("m1", m1).set("m2", m2);
    const tasks = Array.from({ length: 10 }, (_, i) => task(`t${i}`, i % 2 ? "odd" : "even"));
    tasks.forEach((t, i) => {
      state.tasks.set(t.id, t);
      state.enqueue(t, i < 6 ? "m1" : "m2");
    });
    const queue = m1.queue;
    for (const t of state.tasks.ofJob("odd")) state.unqueue(t);
    expect(m1.queue).toBe(queue); // the machine's own queue, changed in place
    expect([...m1.queue]).toEqual(["t0", "t2", "t4"]);
    expect([...m2.queue]).toEqual(["t6", "t8"]);
  });
});

describe("LiveState's index of each task's leases", () => {
  it("matches a scan of every lease after any sequence of leases, renewals, reuses of an id, ends and clears", () => {
    for (const seed of [1, 2, 3]) {
      const random = rng(seed);
      const state = new LiveState();
      const taskIds = ["t1", "t2", "t3", "t4"];
      let next = 0;
      for (let step = 0; step < 2000; step++) {
        const r = random();
        const taskId = taskIds[Math.floor(random() * taskIds.length)]!;
        const ids = [...state.leases.keys()];
        const some = ids[Math.floor(random() * ids.length)];
        const fresh = `l${next++}`;
        const lease = (id: string) => ({ id, taskId, jobId: "j", machineId: "m", issuedAt: step, expiresAt: step, pieceRateMicro: 0n, pilot: false, ahead: 0 });
        if (r < 0.5) state.leases.set(fresh, lease(fresh));
        else if (r < 0.6 && some) state.leases.set(some, { ...state.leases.get(some)!, expiresAt: step }); // the same lease, changed
        else if (r < 0.65 && some) state.leases.set(some, lease(some)); // the id again, maybe another task's
        else if (r < 0.95 && some) state.leases.delete(some);
        else if (r < 0.97) state.leases.delete("never-there");
        else state.leases.clear();
        for (const t of taskIds) {
          expect(state.leases.ofTask(t), `seed ${seed} step ${step} task ${t}`).toEqual([...state.leases.values()].filter((l) => l.taskId === t));
        }
      }
    }
  });
});

describe("LiveState's owners of jobs", () => {
  it("still knows a job's owner once the job left memory, keeping the latest 10,000", () => {
    const state = new LiveState();
    state.jobs.set("done", { id: "done", ownerId: "alice", status: "running" } as LiveJob);
    expect(state.ownerOf("done")).toBe("alice");
    state.dropJob("done");
    expect(state.jobs.has("done")).toBe(false);
    expect(state.ownerOf("done")).toBe("alice");
    expect(state.ownerOf("never")).toBeUndefined();
    for (let i = 0; i < 10_000; i++) state.keepOwner(`read-${i}`, "bob");
    expect(state.ownerOf("done")).toBeUndefined(); // the oldest went
    expect(state.ownerOf("read-0")).toBe("bob");
    expect(state.ownerOf("read-9999")).toBe("bob");
  });
});

describe("LiveState's machines holding queued tasks", () => {
  it("are the machines with a queued task, found without a walk over every machine, never one that left", () => {
    const state = new LiveState();
    const machines = ["m1", "m2", "m3"].map(machine);
    for (const m of machines) state.machines.set(m.id, m);
    expect(state.holders()).toEqual([]);
    const [a, b, c] = [task("a", "j"), task("b", "j"), task("c", "j")];
    for (const t of [a, b, c]) state.tasks.set(t.id, t);
    state.enqueue(a, "m1");
    state.enqueue(b, "m2");
    state.enqueue(c, "m2");
    expect(state.holders().map((m) => m.id)).toEqual(["m1", "m2"]);
    state.unqueue(a);
    expect(state.holders().map((m) => m.id)).toEqual(["m2"]);
    state.machines.delete("m2"); // it left the market, its queue with it
    expect(state.holders()).toEqual([]);
    state.enqueue(a, "m1"); // queued again
    expect(state.holders().map((m) => m.id)).toEqual(["m1"]);
  });
});
