// The job file: one JSON document that says everything a job is. Paths in it are relative to
// the file's own folder. The CLI, the SDK and the web form read it; expand.ts turns it into the
// JobRequest the API takes. Unknown keys are refused, so a misspelt "arg" is not silently dropped.
import { z } from "zod";
import { BenefitCurve } from "@cyclemarket/costbenefit";
import { DEFAULT_TASK_LIMITS, JOB_LIMITS as L } from "./limits.ts";
import { Args, Env, JobName, MaxSpend, Sha256Hex, TaskLimits, WorkPerTask } from "./job-request.ts";

/** Contents read from a file beside the job file. */
export const FromFile = z.strictObject({ file: z.string().min(1, "Name the file.") });
export type FromFile = z.infer<typeof FromFile>;

/** Bytes written inline as base64: what a job read back from the market says for binary stdin and files. */
export const Base64Bytes = z.strictObject({ base64: z.string() });
export type Base64Bytes = z.infer<typeof Base64Bytes>;

/** Inline text, `{ "file": PATH }` for bytes (binary is fine) read from a file, or `{ "base64": ... }`. */
export const Stdin = z.union([z.string(), FromFile, Base64Bytes]);
export type Stdin = z.infer<typeof Stdin>;

/** Sandbox path -> the local file (relative to the job file) that becomes it, or inline text. */
export const InputFiles = z.record(z.string(), z.union([z.string().min(1), z.strictObject({ text: z.string() }), Base64Bytes]));
export type InputFiles = z.infer<typeof InputFiles>;

// One task's shape; in generated tasks `{i}` (the task's index from 0) and `{line}` (per-line
// tasks) are put into args, inline stdin, stdin's file, env values and input files' local paths.
const template = {
  args: Args.default([]),
  stdin: Stdin.optional(),
  env: Env.optional(),
  files: InputFiles.optional(),
};

export const ListedTask = z.strictObject(template);
export type ListedTask = z.infer<typeof ListedTask>;

export const CountedTasks = z.strictObject({ count: z.number().int().min(1).max(L.tasksPerJob, `A job has at most ${L.tasksPerJob} tasks.`), ...template });
export type CountedTasks = z.infer<typeof CountedTasks>;

/** One task per non-empty line of a text file. */
export const PerLineTasks = z.strictObject({ lines: z.string().min(1, "Name the file whose lines make the tasks."), ...template });
export type PerLineTasks = z.infer<typeof PerLineTasks>;

export const JobTasks = z.union([
  z.array(ListedTask).min(1, "A job has at least one task.").max(L.tasksPerJob, `A job has at most ${L.tasksPerJob} tasks.`),
  CountedTasks,
  PerLineTasks,
]);
export type JobTasks = z.infer<typeof JobTasks>;

export const JobModule = z.union([z.string().min(1, "Name the module's file."), z.strictObject({ sha256: Sha256Hex })]);
export type JobModule = z.infer<typeof JobModule>;

export const JobFile = z.strictObject({
  /** A place for a link to this documentation in the file itself. */
  $schema: z.string().optional(),
  name: JobName,
  /** Show the job's name to the producers who run its tasks, on their statements (they always see its short id). */
  nameToProducers: z.boolean().default(false),
  /**
   * The WebAssembly (WASI preview 1 command) module: a path relative to the job file, or
   * `{ "sha256": HASH }` for a module the market already holds (what "Run again" gives).
   */
  module: JobModule,
  benefit: BenefitCurve,
  replicas: z.number().int().min(1).max(5).default(1),
  /**
   * Estimated work of one task in seconds of a reference CPU; the market refines it from runs.
   * Leave it out when you do not know: the market then runs the first tasks as pilots, priced at
   * the most a task can do within its wall-time limit, and plans the rest from their measured work.
   */
  workPerTask: WorkPerTask.optional(),
  /**
   * The most the job may be charged should its measured work turn out over `workPerTask`
   * (credits). Without it the charge never exceeds the quoted price.
   */
  maxSpend: MaxSpend.optional(),
  limits: TaskLimits.default(DEFAULT_TASK_LIMITS),
  tasks: JobTasks,
});
export type JobFile = z.infer<typeof JobFile>;
export type JobFileInput = z.input<typeof JobFile>;

/** A job file's problem at one field, as the CLI, the SDK and the page word it. */
export interface JobFileIssue {
  path: string[];
  message: string;
}

/**
 * Checks a job file parsed from JSON: its value, or a problem per field, a key left out worded
 * "required (number)" rather than zod's "expected number, received undefined".
 */
export function checkJobFile(json: unknown): { ok: true; job: JobFile } | { ok: false; issues: JobFileIssue[] } {
  const parsed = JobFile.safeParse(json, { reportInput: true });
  if (parsed.success) return { ok: true, job: parsed.data };
  const words = (i: z.core.$ZodIssue) => (i.code === "invalid_type" && "input" in i && i.input === undefined ? `required (${i.expected})` : i.message);
  return { ok: false, issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: words(i) })) };
}

/** The issues in one line: "benefit.deadline: required (number); tasks.count: ...". */
export const jobFileIssueWords = (issues: readonly JobFileIssue[]) => issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ");
