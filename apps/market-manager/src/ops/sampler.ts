import type { Market } from "../market/market.ts";
import type { JobSpec } from "../market/engine.ts";
import { TIERS, type Sample } from "./rollup.ts";
import { runRollup } from "./history.ts";
import { opsOf } from "./ops.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { marketTotals } from "../db/sql/market-books.ts";

/**
 * The reference task whose price the history follows: one task of a minute's work on the
 * reference machine, 64 MB, worth far more than any price so that the engine's answer is the
 * marginal price of a minute of work now (its marginal cost and the market's fee).
 */
export const REFERENCE_TASK = { work: 60, memoryMb: 64, benefit: { kind: "constant", value: 10_000 } } as const;

function referencePrice(market: Market, now: number): number | null {
  const spec: JobSpec = {
    id: "reference",
    arrivedAt: now,
    benefit: REFERENCE_TASK.benefit,
    replicas: 1,
    tasks: [{ id: "reference-0", work: REFERENCE_TASK.work, memoryMb: REFERENCE_TASK.memoryMb, bytes: 0 }],
  };
  const d = market.engine.decide(spec, now);
  return d.outcome === "admitted" ? d.price : null;
}

/**
 * How long after its settlement time a job's charge is kept out of the running sum: far longer
 * than a settling statement takes to commit (milliseconds; seconds under load), so a charge is
 * read after it committed. A job settled at t whose statement commits after t + SETTLED_LAG_MS
 * (PostgreSQL away that long meanwhile) would be missing from the history's charged total (not
 * from the ledger) until the manager starts again and sums every job once.
 */
const SETTLED_LAG_MS = 30_000;

/**
 * The ledger's running totals now (db/sql/market-books.ts marketTotals); `charged` for every job
 * settled so far. The sum over every job grows with the market's history, so the jobs settled
 * long enough ago are summed once and kept (`chargedKept`), and each sample reads only those since.
 */
async function readTotals(market: Market, now: number) {
  const kept = market.resources.chargedKept;
  const through = Math.max(kept.through, now - SETTLED_LAG_MS);
  const [row] = await runStatement(viaPrisma(market.db), marketTotals, { after: kept.through, through });
  market.resources.chargedKept = { through, sum: kept.sum + BigInt(row!.kept) };
  return {
    charged: kept.sum + BigInt(row!.since),
    paid: BigInt(row!.paid) + BigInt(row!.movedFromEarnings),
    market: BigInt(row!.market),
    granted: BigInt(row!.granted) + BigInt(row!.adminGranted),
  };
}

/**
 * The market's vital signs now, read from the live state in memory (no lock: a sample taken
 * between two halves of a step is off by that step, which the next sample corrects) and the
 * ledger's running totals.
 */
export async function takeSample(market: Market, now: number): Promise<Sample> {
  const s = { machinesOpportunistic: 0, machinesDedicated: 0, slotsOpportunistic: 0, slotsDedicated: 0, running: 0 };
  for (const m of market.state.machines.values()) {
    if (m.kind === "dedicated") (s.machinesDedicated += 1), (s.slotsDedicated += m.slots);
    else (s.machinesOpportunistic += 1), (s.slotsOpportunistic += m.slots);
    s.running += m.leases.size;
  }
  let queued = 0;
  for (const t of market.state.tasks.values()) if (t.state === "queued" || t.state === "pending") queued += 1;
  const slots = s.slotsOpportunistic + s.slotsDedicated;
  const interval = opsOf(market).interval;
  const counts = { ...interval };
  interval.admissions = interval.delays = interval.rejections = 0;
  const totals = await readTotals(market, now);
  return {
    resolution: TIERS[0]!.resolution,
    manager: market.managerId,
    at: new Date(now),
    machinesOpportunistic: s.machinesOpportunistic,
    machinesDedicated: s.machinesDedicated,
    slotsOpportunistic: s.slotsOpportunistic,
    slotsDedicated: s.slotsDedicated,
    utilisation: slots > 0 ? s.running / slots : 0,
    queuedTasks: queued,
    runningTasks: s.running,
    ...counts,
    referencePrice: referencePrice(market, now),
    chargedMicro: totals.charged,
    producerPaidMicro: totals.paid,
    // As the admin's books count it: starting credits are a gift, not a cost of trading.
    profitMicro: totals.market + totals.granted,
  };
}

/**
 * Samples the market every `everyMs` and rolls the history up every `rollupEveryMs`. A failed
 * sample (the database is away) is logged and skipped: history shows the gap.
 */
export function startSampler(market: Market, everyMs: number, rollupEveryMs = 60_000) {
  let busy: Promise<void> | null = null;
  let lastRollup = 0;
  const step = async () => {
    const now = market.clock.now();
    // At a multiple of the interval: the managers' samples of one moment share it, and the market-wide view adds them up.
    const sample = { ...(await takeSample(market, now)), at: new Date(Math.floor(now / everyMs) * everyMs) };
    const key = { resolution: sample.resolution, manager: sample.manager, at: sample.at };
    await market.db.marketSample.upsert({ where: { resolution_manager_at: key }, create: sample, update: {} });
    opsOf(market).metrics.samples.inc();
    if (now - lastRollup >= rollupEveryMs) {
      lastRollup = now;
      await runRollup(market.db, now, market.managerId);
    }
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = step()
      .catch((e) => market.log(`history sample failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => (busy = null));
  }, everyMs);
  return async () => {
    clearInterval(timer);
    await busy;
  };
}
