import type { JobFileInput, ListedTask } from "@cyclemarket/client/job-file";
import type { BenefitCurve } from "@cyclemarket/costbenefit";
import type { Db } from "../db/client.ts";
import { leaseLimits } from "../resources/leases.ts";
import { asText } from "./views.ts";

// "Run again": a job read back as the job file that makes it again. The module is named by its
// hash (the market holds it, so nothing is uploaded twice); tasks are written out as stored,
// stdin and files as text when they are text and as base64 when they are not, so every byte
// goes back exactly as it came.

function bytesField(bytes: Buffer): string | { base64: string } {
  const text = asText(bytes);
  return text !== null ? text : { base64: bytes.toString("base64") };
}

function taskOf(t: { args: string[]; stdin: Uint8Array; env: unknown; files: unknown }): ListedTask {
  const task: ListedTask = { args: t.args };
  const stdin = Buffer.from(t.stdin);
  if (stdin.length) task.stdin = bytesField(stdin);
  const env = t.env as Record<string, string> | null;
  if (env && Object.keys(env).length) task.env = env;
  const files = t.files as Record<string, string> | null;
  if (files && Object.keys(files).length) {
    task.files = Object.fromEntries(
      Object.entries(files).map(([name, b64]) => {
        const v = bytesField(Buffer.from(b64, "base64"));
        return [name, typeof v === "string" ? { text: v } : v];
      }),
    );
  }
  return task;
}

/** The job file that submits this job again, with the same module, curve, limits and tasks. */
export async function jobFileOf(db: Db, jobId: string): Promise<JobFileInput> {
  const job = await db.job.findUniqueOrThrow({ where: { id: jobId } });
  // A job split across managers holds no tasks: its parts hold them, in task order (tasks/split-view.ts).
  const holders = job.status === "split" ? (await db.job.findMany({ where: { partOf: jobId }, orderBy: { taskOffset: "asc" }, select: { id: true } })).map((p) => p.id) : [jobId];
  const tasks = [];
  // Copies of a task are the same task: the original (replica 0) stands for them.
  for (const id of holders) tasks.push(...(await db.task.findMany({ where: { jobId: id, replica: 0 }, orderBy: { index: "asc" }, select: { args: true, stdin: true, env: true, files: true } })));
  return {
    name: job.name,
    ...(job.nameToProducers ? { nameToProducers: true } : {}),
    module: { sha256: job.moduleHash },
    benefit: job.benefit as BenefitCurve,
    replicas: job.replicas,
    // A job still running its pilots gave no estimate, and its file gives none either; once the
    // rest was planned from the pilots, running it again starts from what they measured.
    ...(job.workEstimate === "provisional" ? {} : { workPerTask: job.declaredWorkPerTask ?? job.workPerTask }),
    ...(job.maxSpendMicro === null ? {} : { maxSpend: Number(job.maxSpendMicro) / 1e6 }),
    limits: { memoryMb: job.memoryMbPerTask, wallSeconds: leaseLimits(job.taskLimits).wallMs / 1000 },
    tasks: tasks.map(taskOf),
  };
}
