// A worker's part of a test: run a leased task in the real WASI sandbox and make the report a
// worker sends for it.
import { runTask } from "../../apps/worker-runtime/src/sandbox.ts";
import type { TestMarket } from "./market.ts";

type WorkerClient = ReturnType<TestMarket["tokenClient"]>;
export type TestLease = { leaseId: string; taskId: string; moduleHash: string; args: string[]; stdin: string; limits: { memoryPages: number; outputBytes: number } };

/** The report of `lease` run on `machineId`; `elapsedMs` stands in for the measured run time when given. */
export async function runLease(worker: WorkerClient, machineId: string, lease: TestLease, elapsedMs?: number) {
  const { bytes } = await worker.worker.module.query({ moduleHash: lease.moduleHash });
  const outcome = await runTask({
    module: new Uint8Array(Buffer.from(bytes, "base64")),
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
