// What an admin may change while the market runs (the schema; settings.ts stores and applies it).
import { z } from "zod";
import { POLICY_NAMES } from "@cyclemarket/costbenefit";

/** Credits from 0 to `max`, a nonzero amount at least one micro-credit (the ledger's unit; a smaller one would be 0). */
const credits = (max: number, maxWords: string) => {
  const range = `0, or at least 0.000001 (one micro-credit) and at most ${maxWords} credits.`;
  return z
    .number({ error: range })
    .min(0, range)
    .max(max, range)
    .refine((v) => v === 0 || v >= 0.000001, range);
};

export const AdminSettings = z.object({
  /** H: the planning horizon, seconds; compute usage is committed backlog over H. */
  horizonSeconds: z.number().min(10, "At least 10 seconds.").max(30 * 86_400, "At most 30 days."),
  /** P: credits per abstract cost unit. */
  priceConstant: z.number({ error: "At least 0.000001 and at most 1e9." }).min(1e-6, "At least 0.000001 and at most 1e9.").max(1e9, "At least 0.000001 and at most 1e9."),
  /** A machine silent this long has departed and its leases are taken back. */
  leaseTimeoutMs: z.number().int().min(1000, "At least one second.").max(3_600_000, "At most an hour."),
  /** The policy that decides admission and placement. */
  policy: z.enum(POLICY_NAMES as [string, ...string[]]),
  /**
   * `posted`: a job is charged the price quoted at admission (marginal cost plus the fee), at most
   * its benefit at completion; `bid`: the paper's pay-as-bid, b(j, t).
   */
  pricing: z.enum(["posted", "bid"]),
  /** The market's fee on the marginal cost under posted pricing (0.1 = 10%). */
  feeFraction: z.number().min(0, "Cannot be negative.").max(1, "At most 1 (100%)."),
  /** Credits the market grants each verified consumer, once. */
  startingCredits: credits(1_000_000, "1,000,000"),
  /**
   * How far below zero the market's own account may go: what it may spend on grants, dedicated
   * contracts and lateness penalties before its fees have earned it back.
   */
  marketReserve: credits(1e12, "1e12"),
});
export type AdminSettings = z.infer<typeof AdminSettings>;
export const AdminSettingsPatch = AdminSettings.partial().refine((p) => Object.keys(p).length > 0, "Change at least one setting.");
export type AdminSettingsPatch = z.infer<typeof AdminSettingsPatch>;
