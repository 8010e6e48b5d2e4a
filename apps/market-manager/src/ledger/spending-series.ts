import type { Prepared } from "../db/client.ts";
import { toCredits } from "./ledger.ts";
import { DAY, HOUR } from "./statement.ts";
import { buckets } from "./earnings-series.ts";

/**
 * What a consumer was charged for its jobs ($1) settled from $2 on (ms since the epoch), per hour
 * with charges: each job's charge in the hour it was settled (a compensation counts negative).
 * Read by the index (ownerId, submittedAt) from a week before $2, so a consumer's whole history
 * is never read: a job that took longer than that to settle is left out of the chart.
 */
const SPENT_HOURLY_SQL = `
SELECT coalesce(json_agg(json_build_array(h, micro) ORDER BY h), '[]'::json) AS hourly FROM (
  SELECT (extract(epoch FROM date_trunc('hour', "completedAt")) * 1000)::float8 AS h, sum("chargedMicro")::text AS micro
  FROM "Job"
  WHERE "ownerId" = $1 AND "submittedAt" >= timestamp 'epoch' + ($2::float8 - 7 * 86400000) * interval '1 millisecond'
    AND "completedAt" >= timestamp 'epoch' + $2::float8 * interval '1 millisecond' AND "chargedMicro" IS NOT NULL
  GROUP BY 1) x`;

/** What a consumer spent on its jobs per hour over two days and per day over thirty (the Credits page's chart). */
export async function spendingSeries(reads: Prepared, userId: string, now: number) {
  const since = Math.floor((now - 29 * DAY) / DAY) * DAY;
  const [row] = await reads.rows<{ hourly: [number, string][] }>("consumer-spent-hourly", SPENT_HOURLY_SQL, [userId, since]);
  const points = row!.hourly.map(([at, micro]) => ({ at, micro: BigInt(micro) }));
  const spent = (b: { at: number; earned: number }[]) => b.map(({ at, earned }) => ({ at, spent: earned }));
  return { hourly: spent(buckets(points, now - 47 * HOUR, now, HOUR)), daily: spent(buckets(points, now - 29 * DAY, now, DAY)) };
}
