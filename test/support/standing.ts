import type { Db } from "../../apps/market-manager/src/db/client.ts";

/**
 * Gives `email`'s account what the market would have recorded of `days` of verified work: an
 * account that old, with `verified` results others reproduced (policies/standing.ts). A month of
 * 100,000 results is spot-checked at the floor, 5% of the time.
 */
export async function giveStanding(db: Db, email: string, o: { days: number; verified: number } = { days: 30, verified: 100_000 }) {
  const user = await db.user.findUniqueOrThrow({ where: { email } });
  await db.user.update({ where: { id: user.id }, data: { createdAt: new Date(Date.now() - o.days * 86_400_000) } });
  await db.standing.create({ data: { userId: user.id, verified: o.verified } });
}
