import type { Market } from "../market/market.ts";
import { grantKey, grantStartingCredits } from "./settlement.ts";

/**
 * A consumer's starting credits, once. New consumers get them when they take the consumer role
 * (auth/roles.ts); this covers accounts that took it before grants were made there, at their
 * first look at their balance. The entry's unique key makes "once" a database rule; the market's
 * lock keeps concurrent first looks from tripping over it.
 */
export async function ensureStartingCredits(market: Market, userId: string): Promise<void> {
  if (await market.db.ledgerEntry.findUnique({ where: { uniqueKey: grantKey(userId) }, select: { id: true } })) return;
  await market.serial(() => market.db.$transaction((tx) => grantStartingCredits(tx, userId, market.settings.startingCreditsMicro)));
}
