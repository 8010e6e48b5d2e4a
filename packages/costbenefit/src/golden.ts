// Golden scenarios: small markets written as data (golden/*.json), each with the decisions the
// market must make. The engine replays them here (golden.test.ts) and the live market replays the
// same files through its API (test/integration/golden.test.ts), so the two cannot drift apart.
import { z } from "zod";
import { BenefitCurve } from "./benefit.ts";
import { commitDecision } from "./commit.ts";
import type { Job } from "./job.ts";
import { createPolicy } from "./policies/policy.ts";
import { createRng } from "./rng.ts";
import { MarketState } from "./state/market-state.ts";

export const GoldenMachine = z.object({
  /** Also the machine's name in the live market. */
  id: z.string(),
  /** Machines of one owner belong to one producer account in the live market. */
  owner: z.string(),
  slots: z.number().int().min(1).max(64),
  speed: z.number().positive(),
  memoryPerSlotMb: z.number().positive(),
  pricePerSecond: z.number().min(0),
});

export const GoldenJob = z.object({
  id: z.string(),
  tasks: z.number().int().min(1).max(1000),
  workPerTask: z.number().positive(),
  memoryMb: z.number().int().min(1),
  benefit: BenefitCurve,
  replicas: z.number().int().min(1).max(9).default(1),
  /** What the market must answer: the outcome, the codes of its reasons in order, and where the tasks go (machine id -> tasks). */
  expect: z.object({
    outcome: z.enum(["admitted", "delayed", "rejected"]),
    reasons: z.array(z.string()),
    tasksOn: z.record(z.string(), z.number().int()).optional(),
  }),
});

export const GoldenScenario = z.object({
  description: z.string(),
  policy: z.string().default("miserly"),
  /** The live market's defaults unless a scenario says otherwise. */
  settings: z.object({ horizonSeconds: z.number().positive().default(3600), priceConstant: z.number().positive().default(1) }).default({ horizonSeconds: 3600, priceConstant: 1 }),
  machines: z.array(GoldenMachine).min(1),
  /** Submitted in order, each right after the one before (no task finishes in between). */
  jobs: z.array(GoldenJob).min(1),
});
export type GoldenScenario = z.infer<typeof GoldenScenario>;
export type GoldenOutcome = GoldenJob["expect"];
type GoldenJob = z.infer<typeof GoldenJob>;

/** The engine's answers to a scenario's jobs, in the scenario's own terms. */
export function replayGolden(input: z.input<typeof GoldenScenario>): GoldenOutcome[] {
  const scenario = GoldenScenario.parse(input);
  const state = new MarketState({ ...scenario.settings, linkBytesPerSecond: 1e12 });
  for (const m of scenario.machines) {
    state.upsertMachine({ ...m, kind: "opportunistic", bandwidthBytesPerSecond: 1e12, reputation: 1 }, 0);
  }
  const policy = createPolicy(scenario.policy);
  const rng = createRng(1);
  return scenario.jobs.map((g) => {
    const job: Job = {
      id: g.id,
      arrivedAt: 0,
      benefit: g.benefit,
      replicas: g.replicas,
      tasks: Array.from({ length: g.tasks }, (_, i) => ({ id: `${g.id}.${i}`, work: g.workPerTask, memoryMb: g.memoryMb, bytes: 0 })),
    };
    const d = policy.admit(state, job, 0, rng);
    const out: GoldenOutcome = { outcome: d.outcome, reasons: d.reasons.map((r) => r.code) };
    if (d.outcome === "admitted") {
      commitDecision(state, job, d, 0);
      out.tasksOn = countBy(d.placements.map((p) => p.machineId));
    }
    return out;
  });
}

/** machine id -> how many of the job's task copies it holds. */
export function countBy(machineIds: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const id of [...machineIds].sort()) out[id] = (out[id] ?? 0) + 1;
  return out;
}
