// Market settings an admin may change at run time (docs/DESIGN.md "The economics").
import { z } from "zod";

const positive = z.number().refine((v) => Number.isFinite(v) && v > 0, { message: "must be a positive finite number" });

export const MarketSettings = z.object({
  /** H: planning horizon; compute usage is backlog seconds over H. */
  horizonSeconds: positive.default(3600),
  /** P: credits per abstract cost unit. */
  priceConstant: positive.default(1),
  /** Capacity of the market's own network link. */
  linkBytesPerSecond: positive.default(125_000_000),
  /** A delayed job is rejected once it has waited this long. */
  maxDelaySeconds: positive.default(3600),
  /**
   * A delayed job is asked again once capacity changed since it was last asked (a machine joined
   * or left: at once), and otherwise after a wait that doubles with each answer that left it
   * delayed, from a second up to this. Asking is an admission over every task of the job: a busy
   * market holding big delayed jobs would ask the same question at every tick. The max-wait
   * rejection is not held back by it.
   */
  maxRecheckSeconds: z.number().refine((v) => Number.isFinite(v) && v >= 0, { message: "must be a finite number, 0 or more" }).default(30),
  /**
   * How an admitted job is priced. `posted`: the market's price, the plan's marginal cost plus
   * the fee, never more than the benefit (a posted-price mechanism: the completion the market picks
   * is the consumer's best by their own curve, so the truth is their best report). `bid`: the
   * paper's pay-as-bid, b(j, t) (the Java Market paper, 4.2).
   */
  pricing: z.enum(["posted", "bid"]).default("posted"),
  /** The market's fee on the marginal cost under posted pricing (0.1 = 10%). */
  feeFraction: z.number().refine((v) => Number.isFinite(v) && v >= 0 && v <= 10, { message: "must be between 0 and 10" }).default(0.1),
  /** Most machines one placement search inspects before giving up (no unbounded searches). */
  maxCandidatesPerTask: z.number().int().min(1).max(1_000_000).default(4096),
});
export type MarketSettings = z.infer<typeof MarketSettings>;
export type MarketSettingsInput = z.input<typeof MarketSettings>;
