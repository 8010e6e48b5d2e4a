import type { Market } from "../market/market.ts";
import { grantKey, startingGrant } from "./entries.ts";
import { lockSpendable, post } from "./ledger.ts";
import { shortId } from "@cyclemarket/client/job-file";

/**
 * A consumer's starting credits: once per verified address (the grant's unique key makes "once" a
 * database rule), to a user who chose the consumer role (the roles a sign-up starts with are not a
 * choice: an account that only produces would otherwise be granted them), in the amount the admin
 * set, and only while the market's reserve covers it, so sign-ups cannot be farmed for credits.
 * Called when a verified user takes the consumer role, when a consumer verifies their address, and
 * at a consumer's look at their balance (accounts from before). The market's lock keeps
 * concurrent calls from tripping over each other.
 */
export async function ensureStartingCredits(
  market: Market,
  userId: string,
): Promise<"granted" | "already" | "unverified" | "not-chosen" | "not-consumer" | "none" | "reserve-spent"> {
  const known = grantedOf(market);
  if (known.has(userId)) return "already";
  // A user who never chose roles asks at every look at their balance; the answer changes only when they choose.
  if (unchosenOf(market).has(userId)) return "not-chosen";
  if (await market.db.ledgerEntry.findUnique({ where: { uniqueKey: grantKey(userId) }, select: { id: true } })) {
    known.add(userId);
    return "already";
  }
  const outcome = await market.serial(async () => {
    const user = await market.db.user.findUnique({ where: { id: userId }, select: { emailVerified: true, roles: true, rolesChosenAt: true } });
    if (!user?.emailVerified) return "unverified";
    if (user.rolesChosenAt === null) return "not-chosen";
    if (!user.roles.includes("consumer")) return "not-consumer";
    const amount = market.settings.startingCreditsMicro;
    if (amount <= 0n) return "none";
    return market.db.$transaction(async (tx) => {
      if (await tx.ledgerEntry.findUnique({ where: { uniqueKey: grantKey(userId) }, select: { id: true } })) return "already" as const;
      // The market's reserve under its row's lock: another manager's grant or payment cannot spend it between this look and the grant.
      if ((await lockSpendable(tx, { kind: "market" })) < amount) {
        market.log(`no starting credits for ${shortId(userId)}: the market's reserve is spent`);
        return "reserve-spent" as const;
      }
      await post(tx, startingGrant(userId, amount));
      return "granted" as const;
    });
  });
  if (outcome === "granted" || outcome === "already") known.add(userId);
  if (outcome === "not-chosen") unchosenOf(market).add(userId);
  return outcome;
}

/** The user chose their roles (auth/roles.ts): their next call for the grant reads them again. */
export function rolesChosen(market: Market, userId: string): void {
  unchosenOf(market).delete(userId);
}

/**
 * Users the market has seen granted (a grant is never taken back): a consumer's page asks at
 * every balance poll, and the grant's lookup would be a query each time.
 */
const grantedOf = (market: Market) => market.resources.granted;

/** Verified users found not to have chosen their roles yet (forgotten when they choose). */
const unchosenOf = (market: Market) => market.resources.unchosen;
