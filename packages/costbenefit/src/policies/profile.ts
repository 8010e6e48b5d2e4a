// A policy is built from a profile that is plain data: which admission rule, which placement
// rule, which migration rule. The registry names the profiles; an admin may override fields.
import { z } from "zod";

export const AdmissionRule = z.enum(["miserly", "admit-all"]);
export const PlacementRule = z.enum(["marginal-cost", "round-robin", "least-loaded", "random", "earliest-finish"]);
export const MigrationRule = z.enum(["none", "rebalance", "cost", "load"]);

export const PolicyProfile = z.object({
  admission: AdmissionRule,
  placement: PlacementRule,
  migration: z
    .object({
      rule: MigrationRule,
      /** Whether running tasks may move (process migration, as in Mosix), or only queued ones. */
      moveRunning: z.boolean().default(false),
      maxMovesPerTick: z.number().int().min(0).max(10_000).default(8),
      /** A move must save at least this fraction of its cost (hysteresis against ping-pong). */
      minGain: z.number().min(0).max(10).default(0.1),
    })
    .default({ rule: "none", moveRunning: false, maxMovesPerTick: 8, minGain: 0.1 }),
  /**
   * Without admission control, a job that no machine can take within its usage bounds waits in
   * the market's queue (delayed, never rejected for cost) and flows to the first machine that
   * falls back within bounds: E-Mosix's migration of queued work. Otherwise it overflows at once.
   */
  holdBeyondBounds: z.boolean().default(false),
  /** Machines below this reputation are not used. */
  minReputation: z.number().min(0).max(1).default(0),
  /** Most breakpoints of a benefit curve tried as completion times (besides "no deadline"). */
  maxCandidateTimes: z.number().int().min(1).max(1000).default(16),
});
export type PolicyProfile = z.infer<typeof PolicyProfile>;
export type PolicyProfileInput = z.input<typeof PolicyProfile>;
