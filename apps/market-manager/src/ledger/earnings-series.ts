import type { Db } from "../db/client.ts";
import { toCredits } from "./ledger.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Buckets of `size` ms from `from` to `now`, each with what was earned in it (zeros included, so a chart shows the quiet hours). */
function buckets(points: { at: number; micro: bigint }[], from: number, now: number, size: number) {
  const start = Math.floor(from / size) * size;
  const sums = new Map<number, bigint>();
  for (let t = start; t <= now; t += size) sums.set(t, 0n);
  for (const p of points) {
    const b = Math.floor(p.at / size) * size;
    if (sums.has(b)) sums.set(b, sums.get(b)! + p.micro);
  }
  return [...sums].map(([at, micro]) => ({ at, earned: toCredits(micro) }));
}

/** What a producer earned (run payments and contracts) per hour over two days and per day over thirty. */
export async function earningsSeries(db: Db, userId: string, now: number) {
  const account = await db.ledgerAccount.findUnique({ where: { kind_userId: { kind: "producer", userId } }, select: { id: true } });
  const since = now - 30 * DAY;
  const postings = account
    ? await db.ledgerPosting.findMany({
        where: { accountId: account.id, amountMicro: { gt: 0n }, entry: { createdAt: { gte: new Date(since) }, kind: { in: ["payment", "contract"] } } },
        select: { amountMicro: true, entry: { select: { createdAt: true } } },
      })
    : [];
  const points = postings.map((p) => ({ at: p.entry.createdAt.getTime(), micro: p.amountMicro }));
  return { hourly: buckets(points, now - 47 * HOUR, now, HOUR), daily: buckets(points, now - 29 * DAY, now, DAY) };
}
