import type { TaskErrorCode } from "@cyclemarket/worker-runtime";

/** A worker's report of one run, naming the lease it ran under (worker.report). Its own file: leases.ts takes it and results.ts completes it. */
export interface TaskReport {
  machineId: string;
  leaseId: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  outputHash: string;
  elapsedMs: number;
  error?: { code: TaskErrorCode; message?: string } | undefined;
}
