import type { Prepared } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { prepared } from "../db/sql/runners.ts";
import { consumerSpentHourly } from "../db/sql/consumer-spending.ts";
import { toCredits } from "./ledger.ts";
import { DAY, HOUR } from "./statement.ts";
import { buckets } from "./earnings-series.ts";

/** What a consumer spent on its jobs per hour over two days and per day over thirty (the Credits page's chart). */
export async function spendingSeries(reads: Prepared, userId: string, now: number) {
  const since = Math.floor((now - 29 * DAY) / DAY) * DAY;
  const [row] = await runStatement(prepared(reads), consumerSpentHourly, { consumerId: userId, since });
  const points = row!.hourly.map(([at, micro]) => ({ at, micro: BigInt(micro) }));
  const spent = (b: { at: number; earned: number }[]) => b.map(({ at, earned }) => ({ at, spent: earned }));
  return { hourly: spent(buckets(points, now - 47 * HOUR, now, HOUR)), daily: spent(buckets(points, now - 29 * DAY, now, DAY)) };
}
