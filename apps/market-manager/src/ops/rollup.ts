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
  /** The Market Manager that took it (its own machines, tasks and decisions). */
  manager: string;
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
 * The samples are one manager's.
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

/** A manager's last sample stands for it this long (a few of its intervals); past that it has stopped. */
const STANDS_FOR_INTERVALS = 3;

/**
 * The whole market's samples from each manager's: at each moment a manager sampled, every
 * manager's latest sample (one that stopped sampling a while ago no longer counts) added up.
 * Machines, slots and tasks are summed and utilisation is the running tasks over the slots; the
 * decisions are those counted at that moment; the reference price is the lowest (a consumer
 * shops for it); the money totals are the ledger's, the same whoever read them, so the latest.
 */
export function marketWide(rows: readonly Sample[], resolution: number): Sample[] {
  const sorted = [...rows].sort((a, b) => a.at.getTime() - b.at.getTime());
  const latest = new Map<string, Sample>();
  const out: Sample[] = [];
  for (let i = 0; i < sorted.length; ) {
    const at = sorted[i]!.at.getTime();
    const now: Sample[] = [];
    for (; i < sorted.length && sorted[i]!.at.getTime() === at; i++) now.push(sorted[i]!);
    for (const s of now) latest.set(s.manager, s);
    const standing = [...latest.values()].filter((s) => at - s.at.getTime() <= STANDS_FOR_INTERVALS * resolution * 1000);
    const sum = (k: "machinesOpportunistic" | "machinesDedicated" | "slotsOpportunistic" | "slotsDedicated" | "queuedTasks" | "runningTasks") => standing.reduce((t, s) => t + s[k], 0);
    const count = (k: "admissions" | "delays" | "rejections") => now.reduce((t, s) => t + s[k], 0);
    const prices = standing.flatMap((s) => (s.referencePrice === null ? [] : [s.referencePrice]));
    const last = now[now.length - 1]!;
    const slots = sum("slotsOpportunistic") + sum("slotsDedicated");
    // Averaged rows (a coarser tier) hold mean running tasks and slots: their ratio is the mean's utilisation near enough.
    const running = standing.reduce((t, s) => t + s.utilisation * (s.slotsOpportunistic + s.slotsDedicated), 0);
    out.push({
      ...last,
      manager: "",
      at: new Date(at),
      machinesOpportunistic: sum("machinesOpportunistic"),
      machinesDedicated: sum("machinesDedicated"),
      slotsOpportunistic: sum("slotsOpportunistic"),
      slotsDedicated: sum("slotsDedicated"),
      utilisation: slots > 0 ? running / slots : 0,
      queuedTasks: sum("queuedTasks"),
      runningTasks: sum("runningTasks"),
      admissions: count("admissions"),
      delays: count("delays"),
      rejections: count("rejections"),
      referencePrice: prices.length ? Math.min(...prices) : null,
    });
  }
  return out;
}

/** The rows of each tier past its keeping time: older than this instant. */
export const expiredBefore = (tier: Tier, now: number) => new Date(now - tier.keepMs);
