// History is kept at four resolutions, each for as long as it is worth its rows (README "History"):
// a year of the market is about 9,000 hourly rows, a week 670 quarter-hours, a day 1,440 minutes
// and the last hour 720 five-second samples.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface Tier {
  /** Seconds each row covers. */
  resolution: number;
  /** How long rows of this tier are kept, in milliseconds. */
  keepMs: number;
}

export const TIERS: readonly Tier[] = [
  { resolution: 5, keepMs: HOUR },
  { resolution: 60, keepMs: DAY },
  { resolution: 900, keepMs: 7 * DAY },
  { resolution: 3600, keepMs: 365 * DAY },
];

export interface Sample {
  resolution: number;
  at: Date;
  machinesOpportunistic: number;
  machinesDedicated: number;
  slotsOpportunistic: number;
  slotsDedicated: number;
  utilisation: number;
  queuedTasks: number;
  runningTasks: number;
  admissions: number;
  delays: number;
  rejections: number;
  referencePrice: number | null;
  chargedMicro: bigint;
  producerPaidMicro: bigint;
  profitMicro: bigint;
}

const GAUGES = ["machinesOpportunistic", "machinesDedicated", "slotsOpportunistic", "slotsDedicated", "utilisation", "queuedTasks", "runningTasks"] as const;
const COUNTS = ["admissions", "delays", "rejections"] as const;

/** The finest tier that still holds the whole range (the last hour: 5 s; the last week: 15 min). */
export function tierFor(rangeMs: number): Tier {
  return TIERS.find((t) => t.keepMs >= rangeMs) ?? TIERS[TIERS.length - 1]!;
}

/** Where the bucket of `resolution` seconds holding `at` starts. */
export const bucketStart = (at: number, resolution: number) => Math.floor(at / (resolution * 1000)) * resolution * 1000;

/**
 * Finer samples become one row per bucket of `resolution` seconds: gauges are averaged, counts of
 * events summed, running money totals and the reference price taken from the bucket's last sample
 * that has them. Only buckets that ended by `now` are made, so a bucket is never written half-full.
 */
export function rollup(samples: readonly Sample[], resolution: number, now: number): Sample[] {
  const buckets = new Map<number, Sample[]>();
  for (const s of samples) {
    const start = bucketStart(s.at.getTime(), resolution);
    if (start + resolution * 1000 > now) continue;
    const list = buckets.get(start);
    if (list) list.push(s);
    else buckets.set(start, [s]);
  }
  return [...buckets]
    .sort((a, b) => a[0] - b[0])
    .map(([start, list]) => {
      const sorted = [...list].sort((a, b) => a.at.getTime() - b.at.getTime());
      const last = sorted[sorted.length - 1]!;
      const priced = sorted.filter((s) => s.referencePrice !== null);
      const row: Sample = {
        ...last,
        resolution,
        at: new Date(start),
        referencePrice: priced.length ? priced.reduce((sum, s) => sum + s.referencePrice!, 0) / priced.length : null,
      };
      for (const k of GAUGES) row[k] = sorted.reduce((sum, s) => sum + s[k], 0) / sorted.length;
      for (const k of COUNTS) row[k] = sorted.reduce((sum, s) => sum + s[k], 0);
      return row;
    });
}

/** The rows of each tier past its keeping time: older than this instant. */
export const expiredBefore = (tier: Tier, now: number) => new Date(now - tier.keepMs);
