// Machine profiles as the Resource Manager registers them (docs/DESIGN.md "Machines";
// the Java Market paper, section 5.5.2: opportunistic machines are paid per second of successful use,
// dedicated machines for a total price until a known departure).
import { z } from "zod";
import { MAX_CREDITS, MAX_SECONDS } from "./benefit.ts";

const finite = z.number().refine(Number.isFinite, { message: "must be a finite number" });
const positive = finite.refine((v) => v > 0, { message: "must be positive" });

/**
 * The bandwidth planned for a machine whose link to the market is not measured (browsers cannot
 * measure theirs yet): a modest link, so input-heavy tasks do not count on more.
 */
export const UNMEASURED_BANDWIDTH = 1_000_000;

const common = {
  id: z.string().min(1).max(200),
  /** Tasks the machine runs at once (Web Workers or worker threads). */
  slots: z.number().int().min(1).max(4096),
  /** Normalized work units per second per slot; the reference machine is 1.0. */
  speed: positive.refine((v) => v <= 1e4, { message: "must be at most 10000 (reference machine is 1)" }),
  memoryPerSlotMb: positive.refine((v) => v <= 1e7, { message: "must be at most 1e7 MB" }),
  /** Bytes per second between the machine and the market, as measured; UNMEASURED_BANDWIDTH until it is. */
  bandwidthBytesPerSecond: positive.refine((v) => v <= 1e12, { message: "must be at most 1e12 B/s" }).default(UNMEASURED_BANDWIDTH),
  /** In [0, 1]; placement skips machines below the policy's minimum. */
  reputation: finite.refine((v) => v >= 0 && v <= 1, { message: "must be between 0 and 1" }).default(1),
  /**
   * Who controls the machine. Replicas of a task go to machines of different owners: one owner's
   * machines agreeing with each other verify nothing (docs/DESIGN.md "Verification"). Unset: the
   * machine is its own owner.
   */
  owner: z.string().min(1).max(200).optional(),
  /**
   * False while the producer has switched the machine's capacity off (paused it, it is outside
   * its schedule, or its owner is using it): it keeps its place in the market and the tasks it is
   * running, but no new task is planned on it. A CPU limit or a memory cap is not this: it is a
   * lower `speed` or `memoryPerSlotMb` in the profile the producer offers.
   */
  available: z.boolean().default(true),
};

export const OpportunisticMachine = z.object({
  ...common,
  kind: z.literal("opportunistic"),
  /** cps(m): credits per second of successful use. */
  pricePerSecond: finite.refine((v) => v >= 0 && v <= MAX_CREDITS, { message: "must be between 0 and 1e12" }),
});
export const DedicatedMachine = z.object({
  ...common,
  kind: z.literal("dedicated"),
  /** c(m): total price of the contract, paid whatever the use. */
  contractPrice: finite.refine((v) => v >= 0 && v <= MAX_CREDITS, { message: "must be between 0 and 1e12" }),
  /** dp(m): absolute time (seconds, the market's clock) until which the machine is ours. */
  departureAt: finite.refine((v) => v >= 0 && v <= 1e12, { message: "must be a time in seconds" }),
});
export const MachineProfile = z.discriminatedUnion("kind", [OpportunisticMachine, DedicatedMachine]);
export type MachineProfile = z.infer<typeof MachineProfile>;
export type MachineProfileInput = z.input<typeof MachineProfile>;

/** A dedicated machine offered to the market: accepted or rejected at once (the Java Market paper, 5.5.2). */
export const DedicatedOffer = DedicatedMachine;
export type DedicatedOffer = z.infer<typeof DedicatedOffer>;
export type DedicatedOfferInput = z.input<typeof DedicatedOffer>;

export { MAX_SECONDS };
