// How long the manager itself took over each kind of call during a bench's load, as its /metrics
// histogram counts it (cyclemarket_api_duration_seconds: from the caller checked to the answer
// ready, a report's group commit included; not the time the request waited to be read, nor the
// answer's way back). Beside the load generator's own timings it tells the manager's part of a
// call from the event loops' and the network's. The histogram has buckets, not samples: a
// percentile here is the upper bound of the bucket it falls in (1, 2.5, 5, 10, 25, 50, 100, 250
// ms, ...), `null` past the last.
import type { Histogram } from "prom-client";

/** Per procedure, the histogram's cumulative count at each bucket's upper bound (seconds). */
type Counts = Map<string, Map<number, number>>;

/** A sample's labels as the key its times are kept under. */
type KeyOf = (labels: Partial<Record<string, string | number>>) => string;

async function read(histogram: Histogram, keyOf: KeyOf): Promise<Counts> {
  const counts: Counts = new Map();
  for (const v of (await histogram.get()).values) {
    if (!v.metricName?.endsWith("_bucket")) continue;
    const procedure = keyOf(v.labels);
    const le = v.labels.le === "+Inf" ? Infinity : Number(v.labels.le);
    let of = counts.get(procedure);
    if (!of) counts.set(procedure, (of = new Map()));
    // Summed over the outcome label: a refusal took its time too.
    of.set(le, (of.get(le) ?? 0) + v.value);
  }
  return counts;
}

export interface ServerTime {
  p50: number | null;
  p99: number | null;
  count: number;
}

/**
 * The counts now; `since` gives each procedure's percentiles over the calls from then on (or,
 * with `keyOf`, those of whatever the histogram's labels name: the journal's kinds and stages).
 */
export async function serverTimes(histogram: Histogram, keyOf: KeyOf = (labels) => String(labels.procedure)) {
  const before = await read(histogram, keyOf);
  return {
    async since(): Promise<Record<string, ServerTime>> {
      const out: Record<string, ServerTime> = {};
      for (const [procedure, now] of await read(histogram, keyOf)) {
        const was = before.get(procedure);
        const bounds = [...now.keys()].sort((a, b) => a - b);
        const cumulative = bounds.map((le) => now.get(le)! - (was?.get(le) ?? 0));
        const count = cumulative[cumulative.length - 1] ?? 0;
        if (count === 0) continue;
        const at = (q: number) => {
          const i = cumulative.findIndex((c) => c >= q * count);
          const le = bounds[i]!;
          return Number.isFinite(le) ? Math.round(le * 1e4) / 10 : null;
        };
        out[procedure] = { p50: at(0.5), p99: at(0.99), count };
      }
      return out;
    },
  };
}
