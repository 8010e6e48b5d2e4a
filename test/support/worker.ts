// A worker's part of a test: run a leased task in the real WASI sandbox and make the report a
// worker sends for it.
import { createHash } from "node:crypto";
import { runTask } from "../../apps/worker-runtime/src/sandbox.ts";
import { CAT_WAT, wat } from "../../apps/worker-runtime/src/testing/fixtures.ts";
import type { TestMarket } from "./market.ts";

type WorkerClient = ReturnType<TestMarket["tokenClient"]>;
export type TestLease = { leaseId: string; taskId: string; moduleHash: string; args: string[]; stdin: string; limits: { memoryPages: number; outputBytes: number } };

/** The module a lease runs, fetched as a worker does while it holds the lease. */
export async function leaseModule(worker: WorkerClient, machineId: string, lease: TestLease) {
  const { bytes } = await worker.worker.module.query({ moduleHash: lease.moduleHash, machineId });
  return new Uint8Array(Buffer.from(bytes, "base64"));
}

/**
 * The report of `lease` run on `machineId`; `elapsedMs` stands in for the measured run time when
 * given, and `module` for fetching it now (a lease that has run out may no longer fetch it).
 */
export async function runLease(worker: WorkerClient, machineId: string, lease: TestLease, elapsedMs?: number, module?: Uint8Array) {
  const outcome = await runTask({
    module: module ?? (await leaseModule(worker, machineId, lease)),
    args: lease.args,
    stdin: new Uint8Array(Buffer.from(lease.stdin, "base64")),
    seed: lease.taskId,
    limits: lease.limits,
  });
  return {
    machineId,
    leaseId: lease.leaseId,
    exitCode: outcome.exitCode,
    stdout: Buffer.from(outcome.stdout).toString("base64"),
    stderr: Buffer.from(outcome.stderr).toString("base64"),
    outputHash: outcome.outputHash,
    elapsedMs: elapsedMs ?? outcome.elapsedMs,
  };
}

/** A report of `leaseId` on `machineId` that claims `text` as the run's output without running it: a forger's. */
/** A one-slot opportunistic machine's offer at speed 1, asking `pricePerSecond` (credits per reference second). */
export const machineOffer = (name: string, pricePerSecond: number) => ({
  name,
  kind: "opportunistic" as const,
  slots: 1,
  speed: 1,
  memoryPerSlotMb: 512,
  bandwidthBytesPerSecond: 1e7,
  pricePerSecond,
  userAgent: "test",
});

export function forgedReport(machineId: string, leaseId: string, text: string) {
  const stdout = Buffer.from(text);
  return { machineId, leaseId, exitCode: 0, stdout: stdout.toString("base64"), stderr: "", outputHash: createHash("sha256").update(stdout).digest("hex"), elapsedMs: 1000 };
}

/** A market with a consumer and one registered 2-slot machine of a producer's, reached with the producer's API token. */
export async function marketWithMachine(market: TestMarket, speed = 1) {
  const consumer = await market.signUp("buyer@example.test", ["consumer"]);
  const producer = await market.signUp("seller@example.test", ["producer"]);
  const worker = market.tokenClient((await producer.account.tokens.create.mutate({ name: "rack" })).token);
  const { machineId } = await worker.worker.register.mutate({
    name: "rack",
    kind: "opportunistic",
    slots: 2,
    speed,
    memoryPerSlotMb: 512,
    bandwidthBytesPerSecond: 1e7,
    pricePerSecond: 0.001,
    userAgent: "test",
  });
  return { consumer, worker, machineId };
}

/**
 * A live lease on `machineId` of a one-task job that runs the module `hash`, which the consumer
 * uploaded: a machine is sent a module's bytes only while it holds such a lease. The machine must
 * be the only one free to take the task.
 */
export async function leaseOfModule(consumer: WorkerClient, worker: WorkerClient, machineId: string, hash: string, name = "program") {
  const { jobId, decision } = await consumer.jobs.submit.mutate({
    name,
    source: { kind: "module", moduleHash: hash, workPerTask: 0.01, tasks: [{ args: [] }] },
    benefit: { kind: "constant", value: 100 },
  });
  if (decision.outcome !== "admitted") throw new Error(`the job running ${hash.slice(0, 12)} was not admitted: ${JSON.stringify(decision)}`);
  const { leases } = await worker.worker.lease.mutate({ machineId, max: 1 });
  const lease = leases.find((l) => l.jobId === jobId);
  if (!lease) throw new Error(`the machine got no lease of the job running ${hash.slice(0, 12)}`);
  return { jobId, lease };
}

/**
 * A job of `tasks` copies of the cat program (each prints its stdin, `line <i>`: a few
 * milliseconds of work, declared as `workPerTask`, 0.01 reference seconds unless given) with a
 * constant benefit of `value`.
 */
export function catJob(tasks: number, o: { value: number; maxSpend?: number; workPerTask?: number }) {
  return {
    name: "cat",
    source: {
      kind: "upload" as const,
      moduleBase64: Buffer.from(wat(CAT_WAT)).toString("base64"),
      tasks: Array.from({ length: tasks }, (_, i) => ({ args: [] as string[], stdin: Buffer.from(`line ${i}`).toString("base64") })),
      workPerTask: o.workPerTask ?? 0.01,
      memoryMbPerTask: 16,
    },
    benefit: { kind: "constant" as const, value: o.value },
    ...(o.maxSpend === undefined ? {} : { maxSpend: o.maxSpend }),
  };
}
