import { checkJobRequest, describeJobReason, type ModuleSource } from "@cyclemarket/client/job-file";
import { refuse } from "../api/errors.ts";

/** A task's limits as the sandbox counts them: wall milliseconds and 64 KiB pages of memory. */
export interface TaskLimitsStored {
  wallMs: number;
  memoryPages: number;
}

const PAGES_PER_MB = 16;
const MAX_PAGES = 65_536; // all of a 32-bit memory

/**
 * A job submitted from a job file (`source.kind === "module"`): checked past its schema (file
 * names that would leave the sandbox's root, sizes per task and per job) with the reason as
 * data, then turned into the Task Manager's tasks. The module was uploaded before, by hash.
 */
export function prepareModuleSource(source: ModuleSource) {
  const problem = checkJobRequest({ source });
  if (problem) throw refuse.badRequest(problem, describeJobReason(problem) ?? problem.code);
  return {
    tasks: source.tasks.map((t) => ({
      args: t.args,
      stdin: Buffer.from(t.stdin, "base64"),
      env: Object.keys(t.env).length ? t.env : null,
      files: Object.keys(t.files).length ? t.files : null,
    })),
    workPerTask: source.workPerTask,
    memoryMbPerTask: source.limits.memoryMb,
    taskLimits: {
      wallMs: Math.round(source.limits.wallSeconds * 1000),
      memoryPages: Math.min(MAX_PAGES, source.limits.memoryMb * PAGES_PER_MB),
    } satisfies TaskLimitsStored,
  };
}
