// What a policy answers, as data the API layer can validate and forward.
import { z } from "zod";
import { Reason } from "./reasons.ts";
import { PendingTask } from "./job.ts";

export const Placement = z.object({
  /** The task id the state knows: the job's task id, or `${taskId}~${r}` for replica r >= 1. */
  taskId: z.string(),
  machineId: z.string(),
  expectedFinishAt: z.number(),
  /** Credits: P x abstract marginal cost + expected producer payment. */
  marginalCost: z.number(),
});
export type Placement = z.infer<typeof Placement>;

/**
 * The admitted plan priced as if each task's work were `ratio` times what the job declared, on the
 * same placements: what a contradicted estimate is charged (pricing.ts, chargeForWork), and when
 * the same placements would complete with that work. Fixed at admission.
 */
export const WorkPrice = z.object({ ratio: z.number(), price: z.number(), completionAt: z.number() });
export type WorkPrice = z.infer<typeof WorkPrice>;

export const Admitted = z.object({
  outcome: z.literal("admitted"),
  jobId: z.string(),
  completionAt: z.number(),
  /**
   * What the consumer is charged if the job completes as planned: under posted pricing the plan's
   * marginal cost plus the market's fee, at most b(j, completion - arrival); under bid pricing
   * b(j, completion - arrival).
   */
  price: z.number(),
  /** Total credit cost of the placements. */
  marginalCost: z.number(),
  /** What the price is made of: producers' expected payments, congestion (P x abstract cost), the market's fee. */
  priceParts: z.object({ producerPayments: z.number(), congestion: z.number(), fee: z.number() }).optional(),
  placements: z.array(Placement),
  /** The price and completion at multiples of the declared work, ratio 1 first (the quote itself). */
  priceAtWork: z.array(WorkPrice).optional(),
  reasons: z.array(Reason),
});
export const Delayed = z.object({ outcome: z.literal("delayed"), jobId: z.string(), reasons: z.array(Reason) });
export const Rejected = z.object({ outcome: z.literal("rejected"), jobId: z.string(), reasons: z.array(Reason) });
export const Decision = z.discriminatedUnion("outcome", [Admitted, Delayed, Rejected]);
export type Admitted = z.infer<typeof Admitted>;
export type Delayed = z.infer<typeof Delayed>;
export type Rejected = z.infer<typeof Rejected>;
export type Decision = z.infer<typeof Decision>;

/** Re-placement of tasks that came back from a departed machine. */
export const Replacement = z.object({
  placements: z.array(Placement),
  unplaced: z.array(z.object({ task: PendingTask, reasons: z.array(Reason) })),
});
export type Replacement = z.infer<typeof Replacement>;

export const Move = z.object({ taskId: z.string(), fromMachineId: z.string(), toMachineId: z.string(), reasons: z.array(Reason) });
export type Move = z.infer<typeof Move>;

export const TickResult = z.object({
  /** Delayed jobs to run through `admit` again (capacity changed since they were delayed). */
  reevaluate: z.array(z.string()),
  /** Delayed jobs to reject now, with why. */
  reject: z.array(z.object({ jobId: z.string(), reasons: z.array(Reason) })),
  /** Rebalancing or migration moves of tasks, to apply with `state.moveTask`. */
  moves: z.array(Move),
});
export type TickResult = z.infer<typeof TickResult>;

export const OfferDecision = z.object({ accept: z.boolean(), reasons: z.array(Reason) });
export type OfferDecision = z.infer<typeof OfferDecision>;
