import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { startTestMarket, type TestMarket } from "../support/market.ts";
import { waitFor } from "../support/processes.ts";
import { moduleImporting } from "../support/wasm.ts";

// A consumer following a job's outputs (`jobs.streamOutputs`, the SDK's `results()`) is sent each
// task's accepted output once, as the market accepts it, whatever the order the tasks finish in,
// and `end` once the job has ended; a stream resumed from an event id is sent every output from
// that task on. While the job runs, the stream learns which tasks were decided from the market's
// memory; before and after, from PostgreSQL: both must give the same outputs.

let market: TestMarket;
type Client = Awaited<ReturnType<TestMarket["signUp"]>>;
let consumer: Client;
let worker: ReturnType<TestMarket["tokenClient"]>;
let machineId: string;

beforeAll(async () => {
  market = await startTestMarket();
  consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
  ({ machineId } = await worker.worker.register.mutate({
    name: "rack", kind: "opportunistic", slots: 4, speed: 1, memoryPerSlotMb: 512, bandwidthBytesPerSecond: 1e7, pricePerSecond: 0.01, userAgent: "test",
  }));
});
afterAll(() => market?.stop());

const TASKS = 8;
const job = (name: string) => ({
  name,
  source: {
    kind: "upload" as const,
    moduleBase64: Buffer.from(moduleImporting("wasi_snapshot_preview1", "proc_exit")).toString("base64"),
    tasks: Array.from({ length: TASKS }, (_, i) => ({ args: [String(i)] })),
    workPerTask: 0.001,
    memoryMbPerTask: 1,
  },
  benefit: { kind: "constant" as const, value: 50 },
});

type Event = { id: string; kind: "output"; index: number; stdout: string } | { id: string; kind: "end"; status: string };

/** Follows the job's outputs from `lastEventId`, recording every event until `end`. */
function follow(jobId: string, lastEventId?: string) {
  const events: Event[] = [];
  let ended!: () => void;
  let failed!: (e: unknown) => void;
  const done = new Promise<void>((resolve, reject) => ((ended = resolve), (failed = reject)));
  const sub = consumer.jobs.streamOutputs.subscribe(
    { jobId, lastEventId },
    {
      onData: ({ id, data }) => {
        if (data.kind === "end") {
          events.push({ id, kind: "end", status: data.status });
          sub.unsubscribe();
          ended();
        } else events.push({ id, kind: "output", index: data.output.index, stdout: Buffer.from(data.output.stdoutBase64, "base64").toString() });
      },
      onError: failed,
    },
  );
  return { events, done, stop: () => sub.unsubscribe() };
}

/** Every lease the machine can take now, by its task's index (its one argument). */
async function leaseAll() {
  const byIndex = new Map<number, string>();
  for (;;) {
    const { leases } = await worker.worker.lease.mutate({ machineId, max: 8 });
    if (!leases.length) return byIndex;
    for (const l of leases) byIndex.set(Number(l.args[0]), l.leaseId);
  }
}

async function report(leaseId: string, index: number) {
  const stdout = Buffer.from(`out ${index}\n`);
  await worker.worker.report.mutate({
    machineId, leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs: 5,
  });
}

const outputs = (events: Event[]) => events.flatMap((e) => (e.kind === "output" ? [[e.index, e.stdout] as const] : []));

describe("a job's outputs as they are accepted", () => {
  it("are each sent once, in whatever order the tasks finish, then the end", async () => {
    const { jobId } = await consumer.jobs.submit.mutate(job("out of order"));
    const stream = follow(jobId);
    try {
      // The machine holds every task (four slots, twice that leased): the later tasks finish first.
      const leases = await leaseAll();
      expect(leases.size).toBe(TASKS);
      const order = [7, 5, 3, 1, 6, 4, 2, 0];
      for (let step = 0; step < order.length; step += 2) {
        for (const i of order.slice(step, step + 2)) await report(leases.get(i)!, i);
        // The stream sends what was accepted so far before the next runs finish.
        const accepted = order.slice(0, step + 2);
        await waitFor("the accepted outputs", async () => (outputs(stream.events).length >= accepted.length ? true : undefined), 10_000);
        expect(outputs(stream.events).map(([i]) => i).sort()).toEqual([...accepted].sort());
      }
      await stream.done;
    } finally {
      stream.stop();
    }
    expect(outputs(stream.events).sort((a, b) => a[0] - b[0])).toEqual(Array.from({ length: TASKS }, (_, i) => [i, `out ${i}\n`]));
    const end = stream.events.at(-1)!;
    expect(end).toMatchObject({ kind: "end", status: "completed" });
    // The event id counts the tasks from 0 on that were all sent.
    expect(end.id).toBe(String(TASKS));

    // Resumed after the end from an event id: every output from that task on, then the end.
    const resumed = follow(jobId, "5");
    await resumed.done;
    expect(resumed.events.map((e) => (e.kind === "output" ? e.index : e.kind))).toEqual([5, 6, 7, "end"]);
  });

  it("resumed while the job runs, sends what was accepted before and what is accepted after", async () => {
    const { jobId } = await consumer.jobs.submit.mutate(job("resumed"));
    const leases = await leaseAll();
    expect(leases.size).toBe(TASKS);
    for (const i of [0, 1, 2, 4]) await report(leases.get(i)!, i);
    // A client that saw tasks 0-2 (event id 3) reconnects: task 4 was accepted meanwhile.
    const stream = follow(jobId, "3");
    try {
      await waitFor("task 4's output", async () => (outputs(stream.events).some(([i]) => i === 4) ? true : undefined), 10_000);
      for (const i of [6, 3, 7, 5]) await report(leases.get(i)!, i);
      await stream.done;
    } finally {
      stream.stop();
    }
    expect(outputs(stream.events).map(([i]) => i).sort()).toEqual([3, 4, 5, 6, 7]);
    expect(stream.events.at(-1)).toMatchObject({ kind: "end", status: "completed", id: String(TASKS) });
  });
});
