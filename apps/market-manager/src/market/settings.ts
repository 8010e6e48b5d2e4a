import { z } from "zod";
import { POLICY_NAMES } from "@cyclemarket/costbenefit";
import type { Db } from "../db/client.ts";
import { toJson } from "../db/client.ts";
import type { Market } from "./market.ts";
import { setMarketReserve, toMicro } from "../ledger/ledger.ts";

// What an admin may change while the market runs. Each change is stored with who made it and
// applied to the live market at once; at start the stored values win over the defaults.

export const AdminSettings = z.object({
  /** H: the planning horizon, seconds; compute usage is committed backlog over H. */
  horizonSeconds: z.number().min(10, "At least 10 seconds.").max(30 * 86_400, "At most 30 days."),
  /** P: credits per abstract cost unit. */
  priceConstant: z.number().positive("Must be positive.").max(1e9),
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
  startingCredits: z.number().min(0, "Cannot be negative.").max(1_000_000, "At most 1,000,000 credits."),
  /**
   * How far below zero the market's own account may go: what it may spend on grants, dedicated
   * contracts and lateness penalties before its fees have earned it back.
   */
  marketReserve: z.number().min(0, "Cannot be negative.").max(1e12, "At most 1e12 credits."),
});
export type AdminSettings = z.infer<typeof AdminSettings>;
export const AdminSettingsPatch = AdminSettings.partial().refine((p) => Object.keys(p).length > 0, "Change at least one setting.");
export type AdminSettingsPatch = z.infer<typeof AdminSettingsPatch>;

export async function loadSettings(db: Db, defaults: AdminSettings): Promise<AdminSettings> {
  const rows = await db.setting.findMany();
  const stored = Object.fromEntries(rows.map((r) => [r.key, r.value]));
  const parsed = AdminSettings.partial().safeParse(stored);
  return { ...defaults, ...(parsed.success ? parsed.data : {}) };
}

/** Applies a change to the live market, after it is stored. */
export async function applySettings(market: Market, s: AdminSettings) {
  await setMarketReserve(market.db, toMicro(s.marketReserve));
  market.adminSettings = s;
  market.settings.leaseTimeoutMs = s.leaseTimeoutMs;
  market.settings.startingCreditsMicro = toMicro(s.startingCredits);
  market.engine.configure({ horizonSeconds: s.horizonSeconds, priceConstant: s.priceConstant, policy: s.policy, pricing: s.pricing, feeFraction: s.feeFraction, maxDelaySeconds: market.settings.maxDelayMs / 1000 });
}

export async function changeSettings(market: Market, userId: string, patch: AdminSettingsPatch) {
  return market.serial(async () => {
    const current = market.adminSettings;
    const next = AdminSettings.parse({ ...current, ...patch });
    await market.db.$transaction(async (tx) => {
      for (const [key, value] of Object.entries(patch)) {
        const old = current[key as keyof AdminSettings];
        if (old === value) continue;
        await tx.setting.upsert({ where: { key }, create: { key, value: toJson(value) }, update: { value: toJson(value) } });
        await tx.settingChange.create({ data: { key, oldValue: toJson(old), newValue: toJson(value), userId } });
      }
    });
    await applySettings(market, next);
    market.log(`settings changed by ${userId.slice(0, 8)}: ${JSON.stringify(patch)}`);
    return next;
  });
}
