import type { Role } from "../db/generated/enums.ts";
import type { Caller } from "../api/trpc.ts";
import type { Market } from "../market/market.ts";
import { ensureStartingCredits, rolesChosen } from "../ledger/starting-credits.ts";

/**
 * A user picks what they do in the market; admin can only be granted, never chosen. A verified
 * user taking the consumer role gets the starting credits at once (ensureStartingCredits); the
 * roles a sign-up starts with are not a choice, so they never earn the grant.
 */
export async function chooseRoles(market: Market, caller: Caller, roles: Exclude<Role, "admin">[]) {
  const keepAdmin: Role[] = caller.roles.includes("admin") ? ["admin"] : [];
  const next = [...new Set<Role>([...roles, ...keepAdmin])];
  const user = await market.db.user.update({ where: { id: caller.id }, data: { roles: next, rolesChosenAt: new Date(market.clock.now()) } });
  rolesChosen(market, caller.id);
  if (next.includes("consumer")) await ensureStartingCredits(market, caller.id);
  return { roles: user.roles };
}
