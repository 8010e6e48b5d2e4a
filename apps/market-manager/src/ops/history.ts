import { z } from "zod";
import type { Db } from "../db/client.ts";
import { TIERS, expiredBefore, marketWide, rollup, tierFor, type Sample } from "./rollup.ts";

/**
 * Rolls `manager`'s finer rows into each coarser tier, then drops what each tier no longer keeps
 * (anyone's: each manager rolls up its own samples).
 */
export async function runRollup(db: Db, now: number, manager: string): Promise<number> {
  let written = 0;
  for (let i = 1; i < TIERS.length; i++) {
    const tier = TIERS[i]!;
    const finer = TIERS[i - 1]!;
    const latest = await db.marketSample.findFirst({ where: { resolution: tier.resolution, manager }, orderBy: { at: "desc" }, select: { at: true } });
    const from = latest ? new Date(latest.at.getTime() + tier.resolution * 1000) : new Date(0);
    const source = await db.marketSample.findMany({ where: { resolution: finer.resolution, manager, at: { gte: from } }, orderBy: { at: "asc" } });
    const rows = rollup(source, tier.resolution, now);
    if (rows.length) written += (await db.marketSample.createMany({ data: rows, skipDuplicates: true })).count;
  }
  for (const tier of TIERS) await db.marketSample.deleteMany({ where: { resolution: tier.resolution, at: { lt: expiredBefore(tier, now) } } });
  return written;
}

export const HistoryRange = z.object({
  /** How far back from now, in seconds: 15 minutes to a year. */
  seconds: z.number().int().min(60).max(366 * 86_400),
  /** One Market Manager's history (its machines, tasks and decisions); the whole market's when absent. */
  manager: z.string().trim().min(1).max(200, "A manager's name has at most 200 characters.").optional(),
});
export type HistoryRange = z.infer<typeof HistoryRange>;

const credits = (micro: bigint) => Number(micro) / 1e6;

/**
 * The market's history over the range, from the finest tier that covers it; the minutes a coarse
 * tier has not rolled up yet come from the raw samples, so every range reaches the present. One
 * manager's samples as they are, or the whole market's: each manager's added up (marketWide).
 */
export async function historyRange(db: Db, input: HistoryRange, now: number) {
  const tier = tierFor(input.seconds * 1000);
  const since = new Date(now - input.seconds * 1000);
  const whose = input.manager === undefined ? {} : { manager: input.manager };
  const rows = await db.marketSample.findMany({ where: { resolution: tier.resolution, ...whose, at: { gte: since } }, orderBy: { at: "asc" } });
  const raw = TIERS[0]!;
  if (tier !== raw) {
    const after = rows.length ? new Date(rows[rows.length - 1]!.at.getTime() + tier.resolution * 1000) : since;
    rows.push(...(await db.marketSample.findMany({ where: { resolution: raw.resolution, ...whose, at: { gte: after } }, orderBy: { at: "asc" } })));
  }
  const samples = input.manager === undefined ? marketWide(rows, tier.resolution) : rows;
  return {
    resolution: tier.resolution,
    manager: input.manager ?? null,
    samples: samples.map((s: Sample) => ({
      at: s.at.getTime(),
      machinesOpportunistic: s.machinesOpportunistic,
      machinesDedicated: s.machinesDedicated,
      slotsOpportunistic: s.slotsOpportunistic,
      slotsDedicated: s.slotsDedicated,
      utilisation: s.utilisation,
      queuedTasks: s.queuedTasks,
      runningTasks: s.runningTasks,
      admissions: s.admissions,
      delays: s.delays,
      rejections: s.rejections,
      referencePrice: s.referencePrice,
      charged: credits(s.chargedMicro),
      producerPaid: credits(s.producerPaidMicro),
      profit: credits(s.profitMicro),
    })),
  };
}
export type History = Awaited<ReturnType<typeof historyRange>>;

