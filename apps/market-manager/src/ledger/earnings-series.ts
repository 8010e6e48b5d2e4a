import type { Prepared } from "../db/client.ts";
import { toCredits } from "./ledger.ts";
import { DAY, earnedHourly, HOUR } from "./statement.ts";

/** Buckets of `size` ms from `from` to `now`, each with what was earned (or spent) in it (zeros included, so a chart shows the quiet hours). */
export function buckets(points: { at: number; micro: bigint }[], from: number, now: number, size: number) {
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
export async function earningsSeries(reads: Prepared, userId: string, now: number) {
  // Summed per hour by PostgreSQL (at most 720 rows), then into the chart's hours and days.
  const points = await earnedHourly(reads, userId, Math.floor((now - 29 * DAY) / DAY) * DAY);
  return { hourly: buckets(points, now - 47 * HOUR, now, HOUR), daily: buckets(points, now - 29 * DAY, now, DAY) };
}
