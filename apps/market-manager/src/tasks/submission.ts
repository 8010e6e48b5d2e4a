import { z } from "zod";
import { BenefitCurve, MAX_SPLIT_PARTS } from "@cyclemarket/costbenefit";
import { MaxSpend, ModuleSource, WorkPerTask } from "@cyclemarket/client/job-file";
import { nameText, storableText } from "@cyclemarket/worker-runtime";
import { refuse } from "../api/errors.ts";
import { checkModule } from "./modules.ts";
import { ExampleName, exampleModule, exampleOfModule, planExample } from "./examples.ts";
import { prepareModuleSource, type TaskLimitsStored } from "./job-request.ts";
import type { NewTask } from "./intake.ts";
import { replicaId } from "../market/live.ts";
import { rowId } from "../db/row-id.ts";

// A submission as the consumer sends it, and the Task Manager's first pass over it: no database
// and no market, so the same code runs on the market's thread (calls made in the process) and in
// an intake thread (requests over HTTP, tasks/intake-thread.ts).

export const MAX_TASKS = 10_000;
const EXAMPLE_MEMORY_MB = 16;
const MEMORY_RANGE = "A task asks for at least 1 and at most 4096 MB.";

const TaskInput = z.object({
  args: z.array(storableText(4096, "A task argument")).max(256, "A task has at most 256 arguments.").default([]),
  stdin: z.string().max(1_400_000, "A task's stdin is limited to 1 MB.").default(""),
});

export const JobSource = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("example"),
    example: ExampleName,
    params: z.record(z.string(), z.unknown()).default({}),
    taskCount: z.number().int().min(1).max(MAX_TASKS),
  }),
  z.object({
    kind: z.literal("upload"),
    // Base64 of the module; the configured byte limit is checked on the decoded bytes.
    moduleBase64: z.string().min(1).max(24 * 1024 * 1024, "The module is far over the size limit."),
    tasks: z.array(TaskInput).min(1).max(MAX_TASKS),
    // Absent: pilots first, the rest planned from their measured work (costbenefit pilots.ts).
    workPerTask: WorkPerTask.optional(),
    memoryMbPerTask: z.number({ error: MEMORY_RANGE }).int("A task's memory is a whole number of MB.").min(1, MEMORY_RANGE).max(4096, MEMORY_RANGE).default(64),
  }),
  // A job file's request: the module uploaded before, by hash; tasks with env and input files.
  ModuleSource,
]);
export type JobSource = z.infer<typeof JobSource>;

const ManagerName = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "A Market Manager's name is 1 to 64 letters, digits, dots, dashes or underscores.");

export const JobPart = z.object({ of: z.string().uuid("Not a job id.").optional(), fromTask: z.number().int().min(0).max(MAX_TASKS), tasks: z.number().int().min(1).max(MAX_TASKS) });
export type JobPart = z.infer<typeof JobPart>;

export const SubmitJob = z.object({
  name: nameText(120, "A job's name"),
  /** Whether the producers who run its tasks see its name on their statements (they always see its short id). */
  nameToProducers: z.boolean().default(false),
  source: JobSource,
  benefit: BenefitCurve,
  replicas: z.number().int().min(1).max(5).default(1),
  /**
   * The most the consumer allows the job to be charged should its measured work contradict its
   * estimate (credits). Without it the charge never exceeds the quoted price.
   */
  maxSpend: MaxSpend.optional(),
  /**
   * The Market Manager whose quote the consumer took (a quote's `manager`): the submission is sent
   * there, and the job is that manager's (market/shopping.ts). Unnamed, or not live: the manager
   * the submission reached takes it.
   */
  manager: ManagerName.optional(),
  /**
   * A split quote the consumer took (a quote's `split.parts`): the job is split by these task
   * ranges across their managers (tasks/split.ts). `manager` is then ignored.
   */
  split: z.array(z.object({ manager: ManagerName, fromTask: z.number().int().min(0), tasks: z.number().int().min(1) })).min(2).max(MAX_SPLIT_PARTS).optional(),
  /**
   * One part of a split job, as the manager that split it sends it: only the tasks [fromTask,
   * fromTask + tasks) of the source, stored as this job's tasks 0 on; `of` is the whole job the
   * consumer sees (absent in a part's quote).
   */
  part: JobPart.optional(),
});
export type SubmitJob = z.infer<typeof SubmitJob>;

/** What the market needs of a submission beside its tasks' inputs: no stdin, files or module bytes. */
export interface SubmissionHead {
  name: string;
  nameToProducers: boolean;
  benefit: BenefitCurve;
  replicas: number;
  maxSpend: number | undefined;
  /** The Market Manager the consumer chose by its quote, if any. */
  manager?: string | undefined;
  /** The parts of a split quote the consumer took, if any (tasks/split.ts). */
  split?: { manager: string; fromTask: number; tasks: number }[] | undefined;
  /** This job is a part of a split one: which, and where its tasks start in the whole. */
  part?: JobPart | undefined;
  /** Whether the module is named by hash (it must be stored already) rather than sent or shipped. */
  source: { kind: JobSource["kind"]; moduleHash?: string };
}

/** A task as the engine plans it: its id and the bytes of input it moves. */
export interface PlannedTask {
  id: string;
  bytes: number;
}

export interface PreparedJob {
  /** Null when the module is already stored (named by hash). */
  moduleBytes: Uint8Array | null;
  moduleHash: string;
  imports: unknown;
  example: string | null;
  tasks: PlannedTask[];
  /** Undefined: the consumer gave none, and the first tasks run as pilots (costbenefit pilots.ts). */
  workPerTask: number | undefined;
  memoryMbPerTask: number;
  /** The job's own per-task limits; null: the market's defaults. */
  taskLimits: TaskLimitsStored | null;
}

/** A task's inputs as stored: the rows `rowsOf` makes of a prepared job's tasks. */
export type TaskInputs = Omit<NewTask, "id" | "index" | "replica">;

/** The head of a submission: what stays on the market's thread when the tasks do not. */
export const headOf = (input: SubmitJob): SubmissionHead => ({
  name: input.name,
  nameToProducers: input.nameToProducers,
  benefit: input.benefit,
  replicas: input.replicas,
  maxSpend: input.maxSpend,
  ...(input.manager ? { manager: input.manager } : {}),
  ...(input.split ? { split: input.split } : {}),
  ...(input.part ? { part: input.part } : {}),
  source: { kind: input.source.kind, ...(input.source.kind === "module" ? { moduleHash: input.source.moduleHash } : {}) },
});

/**
 * The Task Manager's pass over a valid submission: tasks expanded (an example's plan, the
 * inputs decoded), the module checked, an id per task. Refusals carry their reason (api/errors.ts).
 */
export function prepareSubmission(input: SubmitJob, maxModuleBytes: number): { job: PreparedJob; inputs: TaskInputs[] } {
  const whole = prepareWhole(input, maxModuleBytes);
  return input.part ? partOf(whole, input.part) : whole;
}

/** A part of a split job: its range of the whole's tasks, numbered from 0 (its job row keeps the offset). */
function partOf({ job, inputs }: { job: PreparedJob; inputs: TaskInputs[] }, part: JobPart) {
  const end = part.fromTask + part.tasks;
  if (end > inputs.length) {
    throw refuse.badRequest(
      { code: "invalid-input", issues: [{ path: ["part"], message: `The part's tasks ${part.fromTask} to ${end - 1} are past the job's ${inputs.length} tasks.` }] },
      `The part's tasks ${part.fromTask} to ${end - 1} are past the job's ${inputs.length} tasks.`,
    );
  }
  return { job: { ...job, tasks: job.tasks.slice(part.fromTask, end) }, inputs: inputs.slice(part.fromTask, end) };
}

function prepareWhole(input: SubmitJob, maxModuleBytes: number): { job: PreparedJob; inputs: TaskInputs[] } {
  const withIds = (inputs: TaskInputs[]) => inputs.map((t) => ({ id: rowId(), bytes: t.stdin.length }));
  if (input.source.kind === "module") {
    const { tasks, ...rest } = prepareModuleSource(input.source);
    const example = exampleOfModule(input.source.moduleHash);
    return { job: { moduleBytes: null, moduleHash: input.source.moduleHash, imports: null, example, tasks: withIds(tasks), ...rest }, inputs: tasks };
  }
  let moduleBytes: Uint8Array;
  let inputs: TaskInputs[];
  let workPerTask: number | undefined;
  let memoryMbPerTask: number;
  let example: string | null = null;
  if (input.source.kind === "example") {
    const plan = (() => {
      try {
        return planExample(input.source.example, input.source.params, input.source.taskCount);
      } catch (e) {
        throw refuse.badRequest({ code: "bad-example-params" }, e instanceof z.ZodError ? e.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") : String(e));
      }
    })();
    moduleBytes = exampleModule(input.source.example);
    inputs = plan.tasks.map((args) => ({ args, stdin: Buffer.alloc(0) }));
    workPerTask = plan.workPerTask;
    memoryMbPerTask = EXAMPLE_MEMORY_MB;
    example = input.source.example;
  } else {
    moduleBytes = Buffer.from(input.source.moduleBase64, "base64");
    inputs = input.source.tasks.map((t) => ({ args: t.args, stdin: Buffer.from(t.stdin, "base64") }));
    workPerTask = input.source.workPerTask;
    memoryMbPerTask = input.source.memoryMbPerTask;
  }
  const { hash, info } = checkModule(moduleBytes, maxModuleBytes);
  example ??= exampleOfModule(hash);
  return { job: { moduleBytes, moduleHash: hash, imports: info.imports, example, tasks: withIds(inputs), workPerTask, memoryMbPerTask, taskLimits: null }, inputs };
}

/** Every copy of every task as stored: copy r of task t has the id the engine gives it (replicaId). */
export function rowsOf(tasks: PlannedTask[], inputs: TaskInputs[], replicas: number): NewTask[] {
  return tasks.flatMap((task, index) => Array.from({ length: replicas }, (_, replica) => ({ id: replicaId(task.id, replica), index, replica, ...inputs[index]! })));
}
