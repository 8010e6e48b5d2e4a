// What the API takes: the job file with its paths resolved. The module is named by the SHA-256
// of bytes uploaded before (PUT /api/modules), stdin and input files travel as base64, and
// generated tasks arrive written out, one entry per task.
import { z } from "zod";
import { BenefitCurve } from "@cyclemarket/costbenefit";
import { DEFAULT_TASK_LIMITS, JOB_LIMITS as L } from "./limits.ts";

export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "A module hash is 64 lowercase hexadecimal digits (SHA-256).");
export type Sha256Hex = z.infer<typeof Sha256Hex>;

export const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "An environment variable's name is letters, digits and _, not starting with a digit.");

const MEMORY_RANGE = `A task asks for at least 1 and at most ${L.maxMemoryMb} MB.`;
const WALL_RANGE = `A task's wall-time limit is at least ${L.minWallSeconds} and at most ${L.maxWallSeconds} seconds.`;
const WORK_RANGE = `A task's work estimate is at least ${L.minWorkPerTask} and at most ${L.maxWorkPerTask} seconds (a day) of reference CPU.`;

/** A task's work estimate in seconds of a reference CPU, within the documented range. */
export const WorkPerTask = z.number({ error: WORK_RANGE }).min(L.minWorkPerTask, WORK_RANGE).max(L.maxWorkPerTask, WORK_RANGE);

export const TaskLimits = z.object({
  memoryMb: z.number({ error: MEMORY_RANGE }).int("A task's memory is a whole number of MB.").min(1, MEMORY_RANGE).max(L.maxMemoryMb, MEMORY_RANGE).default(DEFAULT_TASK_LIMITS.memoryMb),
  wallSeconds: z.number({ error: WALL_RANGE }).min(L.minWallSeconds, WALL_RANGE).max(L.maxWallSeconds, WALL_RANGE).default(DEFAULT_TASK_LIMITS.wallSeconds),
});
export type TaskLimits = z.infer<typeof TaskLimits>;

export const Args = z
  .array(z.string().max(L.argChars, `An argument is at most ${L.argChars} characters.`))
  .max(L.argsPerTask, `A task has at most ${L.argsPerTask} arguments.`);

export const Env = z.record(EnvName, z.string().max(L.envValueChars, `An environment value is at most ${L.envValueChars} characters.`));

export const TaskRequest = z.object({
  args: Args.default([]),
  /** base64 */
  stdin: z.string().default(""),
  env: Env.default({}),
  /** Sandbox path -> base64 contents. Names are checked in refusal.ts, so a refusal can say which. */
  files: z.record(z.string(), z.string()).default({}),
});
export type TaskRequest = z.infer<typeof TaskRequest>;

export const ModuleSource = z.object({
  kind: z.literal("module"),
  moduleHash: Sha256Hex,
  /**
   * The consumer's estimate of one task's work, in seconds of a reference CPU (refined from runs).
   * Absent: the first tasks run as pilots and the rest is planned from their measured work.
   */
  workPerTask: WorkPerTask.optional(),
  limits: TaskLimits.default(DEFAULT_TASK_LIMITS),
  tasks: z.array(TaskRequest).min(1, "A job has at least one task.").max(L.tasksPerJob, `A job has at most ${L.tasksPerJob} tasks.`),
});
export type ModuleSource = z.infer<typeof ModuleSource>;

export const JobName = z.string().trim().min(1, "Give the job a name.").max(120);

/**
 * The most the consumer allows a job to be charged should the work the market measures turn out
 * over its estimate (credits). Without it the charge never exceeds the quoted price.
 */
export const MaxSpend = z.number().refine((v) => Number.isFinite(v) && v > 0 && v <= 1e12, { message: "maxSpend is a number of credits above 0 and at most 1e12." });

export const JobRequest = z.object({
  name: JobName,
  /** Whether the producers who run its tasks see its name on their statements (they always see its short id). */
  nameToProducers: z.boolean().default(false),
  source: ModuleSource,
  benefit: BenefitCurve,
  replicas: z.number().int().min(1).max(5).default(1),
  maxSpend: MaxSpend.optional(),
});
export type JobRequest = z.infer<typeof JobRequest>;
