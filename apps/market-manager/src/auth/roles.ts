import type { Role } from "../db/generated/enums.ts";
import type { Caller } from "../api/trpc.ts";
import type { Market } from "../market/market.ts";
import { grantStartingCredits } from "../ledger/settlement.ts";

/**
 * A user picks what they do in the market; admin can only be granted, never chosen. Taking the
 * consumer role grants the starting credits (once: the grant's key is unique), in the same
 * transaction, so a new consumer sees them on their statement from the start.
 */
export async function chooseRoles(market: Market, caller: Caller, roles: Exclude<Role, "admin">[]) {
  const keepAdmin: Role[] = caller.roles.includes("admin") ? ["admin"] : [];
  const next = [...new Set<Role>([...roles, ...keepAdmin])];
  return market.serial(async () => {
    const user = await market.db.$transaction(async (tx) => {
      const updated = await tx.user.update({ where: { id: caller.id }, data: { roles: next } });
      if (next.includes("consumer")) await grantStartingCredits(tx, caller.id, market.settings.startingCreditsMicro);
      return updated;
    });
    return { roles: user.roles };
  });
}
