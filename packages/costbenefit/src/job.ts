// Jobs and their tasks as the Task Manager hands them to the engine (docs/DESIGN.md "Jobs, tasks").
import { z } from "zod";
import { BenefitCurve } from "./benefit.ts";

const finite = z.number().refine(Number.isFinite, { message: "must be a finite number" });

/** Resource demand r(τ) of one task. */
export const TaskDemand = z.object({
  id: z.string().min(1).max(200),
  /** Normalized CPU seconds on a speed-1 slot (the consumer's estimate, refined from runs). */
  work: finite.refine((v) => v > 0 && v <= 1e9, { message: "must be in (0, 1e9] work units" }),
  memoryMb: finite.refine((v) => v >= 0 && v <= 1e7, { message: "must be in [0, 1e7] MB" }),
  /** Bytes in plus out, carried on the market's link. */
  bytes: finite.refine((v) => v >= 0 && v <= 1e13, { message: "must be in [0, 1e13] bytes" }),
});
export type TaskDemand = z.infer<typeof TaskDemand>;

export const Job = z
  .object({
    id: z.string().min(1).max(200),
    /** a(j): absolute arrival time in seconds on the market's clock. */
    arrivedAt: finite.refine((v) => v >= 0, { message: "must be a non-negative time" }),
    tasks: z.array(TaskDemand).min(1).max(100_000),
    benefit: BenefitCurve,
    /** Copies per task for verification by quorum; each copy on a different machine. */
    replicas: z.number().int().min(1).max(9).default(1),
  })
  .superRefine((j, ctx) => {
    const seen = new Set<string>();
    j.tasks.forEach((t, i) => {
      if (seen.has(t.id)) ctx.addIssue({ code: "custom", path: ["tasks", i, "id"], message: `duplicate task id ${t.id}` });
      seen.add(t.id);
    });
  });
export type Job = z.infer<typeof Job>;
export type JobInput = z.input<typeof Job>;

/** A task waiting for a machine, carrying its job so a re-placement keeps the link. */
export const PendingTask = TaskDemand.extend({ jobId: z.string().min(1) });
export type PendingTask = z.infer<typeof PendingTask>;
