// What a producer decides about a machine beyond its cores and price: pause it, limit its CPU,
// let it work only while its owner is not using it or only on a weekly schedule, cap each task's
// memory. Kept by the market on the machine's record; the worker applies what only it can see
// (its clock, its owner's activity), and tells the market whether its capacity is on.
import { z } from "zod";
import { MAX_SCHEDULE_CHARS, parseSchedule } from "./schedule.ts";

export const HandBack = z.enum(["finish", "now"], { error: "Hand-back is \"finish\" (leased tasks finish) or \"now\" (they go back to the market at once)." });
export type HandBack = z.infer<typeof HandBack>;

export const ScheduleText = z
  .string()
  .trim()
  .max(MAX_SCHEDULE_CHARS, `A schedule is at most ${MAX_SCHEDULE_CHARS} characters.`)
  .superRefine((text, ctx) => {
    const parsed = parseSchedule(text);
    if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
  });

export const MachineControls = z.object({
  /** Paused: the machine stays in the market but takes no new task. */
  paused: z.boolean().default(false),
  /** What happens to leased tasks when the machine pauses or switches off: they finish, or go back at once. */
  handBack: HandBack.default("finish"),
  /** Percentage of each core the market may use (duty cycle, see duty-cycle.ts). */
  cpuLimit: z.number().int("The CPU limit is a whole percentage.").min(1, "The CPU limit is at least 1%.").max(100, "The CPU limit is at most 100%.").default(100),
  /** Work only while the owner is not using the machine (browser: tab hidden or user idle; Node: other load low). */
  onlyIdle: z.boolean().default(false),
  /** Node: "not in use" means the rest of the machine keeps below this share of all cores (0 to 1). */
  idleLoad: z.number().min(0, "The idle load is between 0 and 1.").max(1, "The idle load is between 0 and 1.").default(0.3),
  /** Weekly schedule in the machine's local time (schedule.ts); null: any time. */
  schedule: ScheduleText.nullable().default(null),
  /** The most memory one task may have, in MB; null: what the machine offers per slot. */
  maxTaskMemoryMb: z.number().int("The memory cap is a whole number of MB.").min(16, "The memory cap is at least 16 MB.").max(1_048_576, "The memory cap is at most 1 TB.").nullable().default(null),
});
export type MachineControls = z.infer<typeof MachineControls>;
export type MachineControlsInput = z.input<typeof MachineControls>;

/** A change to some of the controls. */
export const MachineControlsPatch = z.object({
  paused: z.boolean(),
  handBack: HandBack,
  cpuLimit: MachineControls.shape.cpuLimit.unwrap(),
  onlyIdle: z.boolean(),
  idleLoad: MachineControls.shape.idleLoad.unwrap(),
  schedule: MachineControls.shape.schedule.unwrap(),
  maxTaskMemoryMb: MachineControls.shape.maxTaskMemoryMb.unwrap(),
}).partial();
export type MachineControlsPatch = z.infer<typeof MachineControlsPatch>;

export const DEFAULT_CONTROLS: MachineControls = MachineControls.parse({});

/** The stored controls (possibly of an older shape, or none), read leniently: anything invalid is the default. */
export function readControls(stored: unknown): MachineControls {
  const parsed = MachineControls.safeParse(stored ?? {});
  if (parsed.success) return parsed.data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(typeof stored === "object" && stored ? stored : {})) {
    if (MachineControls.shape[key as keyof MachineControls]?.safeParse(value).success) out[key] = value;
  }
  return MachineControls.parse(out);
}

/** What the worker sees that the market cannot: whether its schedule and its owner let it work now. */
export interface LocalConditions {
  inSchedule: boolean;
  /** Null when the machine cannot tell (then "only while idle" counts it as idle). */
  ownerIdle: boolean | null;
}

/** Why a machine's capacity is off now, or null when it is on. */
export type OffReason = "paused" | "schedule" | "in-use";

export function offReason(controls: MachineControls, local: LocalConditions): OffReason | null {
  if (controls.paused) return "paused";
  if (!local.inSchedule) return "schedule";
  if (controls.onlyIdle && local.ownerIdle === false) return "in-use";
  return null;
}
