import type { Db } from "../db/client.ts";
import { toJson } from "../db/client.ts";
import type { Market } from "./market.ts";
import { setMarketReserve, toMicro } from "../ledger/ledger.ts";
import { AdminSettings, type AdminSettingsPatch } from "./admin-settings.ts";
import { shortId } from "@cyclemarket/client/job-file";

// What an admin may change while the market runs. Each change is stored with who made it and
// applied to the live market at once; at start the stored values win over the defaults.

export { AdminSettings, AdminSettingsPatch } from "./admin-settings.ts";

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
    market.log(`settings changed by ${shortId(userId)}: ${JSON.stringify(patch)}`);
    return next;
  });
}
