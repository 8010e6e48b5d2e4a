// A policy is built from a profile that is plain data: which admission rule, which placement
// rule, which migration rule. The registry names the profiles; an admin may override fields.
import { z } from "zod";

export const AdmissionRule = z.enum(["miserly", "admit-all", "tickets", "opportunity-cost", "continuous-bid", "reservation"]);
/** The proportional-share and reservation policies of the Millennium paper, 001, 002 and 004: each decides admission, placement and moves itself. */
export const SHARE_RULES = ["tickets", "opportunity-cost", "continuous-bid", "reservation"] as const;
export type ShareRule = (typeof SHARE_RULES)[number];
export const PlacementRule = z.enum(["marginal-cost", "round-robin", "least-loaded", "random", "earliest-finish", "free-slot", "lowest-price", "best-response", "best-fit"]);
export const MigrationRule = z.enum(["none", "rebalance", "cost", "load", "least-usage", "best-response"]);

/** Each share policy places and moves tasks its own way: the placement and migration rules it reads. */
const SHARE_PLACEMENT: Record<ShareRule, z.infer<typeof PlacementRule>> = {
  tickets: "free-slot",
  "opportunity-cost": "lowest-price",
  "continuous-bid": "best-response",
  reservation: "best-fit",
};
const SHARE_MIGRATION: Record<ShareRule, z.infer<typeof MigrationRule> | undefined> = {
  tickets: "least-usage",
  "opportunity-cost": undefined,
  "continuous-bid": "best-response",
  reservation: undefined,
};
/** The rules miserly and admit-all policies can use: the search's placements and migrations.ts. */
const MARKET_PLACEMENTS = new Set<string>(["marginal-cost", "round-robin", "least-loaded", "random", "earliest-finish"]);
const MARKET_MIGRATIONS = new Set<string>(["none", "rebalance", "cost", "load"]);

const PolicyProfileFields = z.object({
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
      /**
       * Rule "load" only: a machine over its memory ushers its largest process off and does not
       * load-balance (Mosix's memory-depletion heuristic); false treats it like any other machine.
       */
      usher: z.boolean().default(true),
    })
    .default({ rule: "none", moveRunning: false, maxMovesPerTick: 8, minGain: 0.1, usher: true }),
  /**
   * Without admission control, a job that no machine can take within its usage bounds waits in
   * the market's queue (delayed, never rejected for cost) and flows to the first machine that
   * falls back within bounds: E-Mosix's migration of queued work. Otherwise it overflows at once.
   */
  holdBeyondBounds: z.boolean().default(false),
  /** Machines below this reputation are not used. */
  minReputation: z.number().min(0).max(1).default(0),
  /**
   * How the share policies derive the job parameters the public Job does not carry (tickets, a
   * rate, a bid, a reservation) from its benefit curve and work: see policies/job-terms.ts.
   */
  terms: z
    .object({
      /** Co-op's p_max (the Computational Co-op paper): a task that would hold a slot longer than this is not started. */
      pMaxSeconds: z.number().positive().max(1e9).default(3600),
      /** A job without a deadline in its curve wants its work done within slack x its longest task (speed-1 seconds). */
      slack: z.number().min(1).max(1e6).default(4),
      /** Value per work unit assumed for a job admitted before this policy was chosen (its curve is not in the state). */
      fallbackValuePerWork: z.number().min(0).max(1e12).default(1),
      /** Fraction of the pool's compute reservations may fill (the Sharc paper: sum R <= capacity). */
      bookable: z.number().positive().max(10).default(1),
    })
    .default({ pMaxSeconds: 3600, slack: 4, fallbackValuePerWork: 1, bookable: 1 }),
  /** Most plans miserly tries, each finishing before the last, besides the one with no deadline (miserly.ts). */
  maxCandidateTimes: z.number().int().min(1).max(1000).default(16),
});

/**
 * A profile is checked when a policy is built: a combination no code would honour is refused
 * with the reason, instead of a policy that throws at its first admission or ignores a field.
 */
export const PolicyProfile = PolicyProfileFields.superRefine((p, ctx) => {
  const refuse = (path: string[], message: string) => ctx.addIssue({ code: "custom", path, message });
  const share = (SHARE_RULES as readonly string[]).includes(p.admission) ? (p.admission as ShareRule) : undefined;
  if (share) {
    if (p.placement !== SHARE_PLACEMENT[share]) refuse(["placement"], `admission "${share}" places tasks by its own rule "${SHARE_PLACEMENT[share]}", not "${p.placement}"`);
    const own = SHARE_MIGRATION[share];
    if (p.migration.rule !== "none" && p.migration.rule !== own) {
      refuse(["migration", "rule"], own ? `admission "${share}" moves tasks by "${own}" or not at all ("none"), not "${p.migration.rule}"` : `admission "${share}" never moves tasks: its migration rule must be "none"`);
    }
  } else {
    if (!MARKET_PLACEMENTS.has(p.placement)) refuse(["placement"], `placement "${p.placement}" belongs to a share policy; admission "${p.admission}" uses one of ${[...MARKET_PLACEMENTS].join(", ")}`);
    if (!MARKET_MIGRATIONS.has(p.migration.rule)) refuse(["migration", "rule"], `migration "${p.migration.rule}" belongs to a share policy; admission "${p.admission}" uses one of ${[...MARKET_MIGRATIONS].join(", ")}`);
  }
  if (p.holdBeyondBounds && !(p.admission === "admit-all" && p.placement === "marginal-cost")) {
    refuse(["holdBeyondBounds"], "holding jobs beyond the usage bounds applies only to admit-all with marginal-cost placement (E-Mosix)");
  }
  if (p.migration.moveRunning && p.migration.rule === "none") refuse(["migration", "moveRunning"], 'running tasks cannot move under the migration rule "none"');
});
export type PolicyProfile = z.infer<typeof PolicyProfile>;
export type PolicyProfileInput = z.input<typeof PolicyProfile>;
