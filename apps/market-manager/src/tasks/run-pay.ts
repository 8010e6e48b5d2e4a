// What one reported run is worth and what it measured, by the engine's rules (costbenefit
// settlement.ts): the piece rate its lease carries (a pilot's: the work the market's clock vouches
// for, up to the most its lease states), where that piece is paid from, and the run's sample of
// its job's work and of its machine's speed. Pure functions of memory; results.ts and
// report-rows.ts write what they answer.
import { estimateContradicted, measuredSpeed, measuredWork, pilotPay, workAtLease, workSample, type WorkSample } from "@cyclemarket/costbenefit";
import type { Market } from "../market/market.ts";
import { askOf, type LiveJob } from "../market/live.ts";
import { toMicro } from "../ledger/ledger.ts";
import type { Completion } from "./results.ts";
import { contradictedCharge } from "../ledger/contradicted.ts";

/** What the run is paid if accepted, in micro-credits. */
export function runPiece(market: Market, c: Pick<Completion, "lease" | "machine" | "report">, now: number): bigint {
  const { lease, machine } = c;
  if (!lease.pilot) return lease.pieceRateMicro;
  const vouched = toMicro(
    pilotPay(market.settings.terms, {
      askPerWorkSecond: machine.kind === "opportunistic" ? askOf(machine) / 1e6 : 0,
      speed: machine.speed,
      observedSeconds: (now - lease.issuedAt) / 1000,
      reportedSeconds: c.report.elapsedMs / 1000,
    }),
  );
  return vouched < lease.pieceRateMicro ? vouched : lease.pieceRateMicro;
}

/** Whether the work measured so far contradicts the consumer's estimate. */
export function contradicted(market: Market, job: LiveJob): boolean {
  if (job.pricing !== "posted") return false;
  const measured = measuredWork(job.workSamples, market.settings.terms.workOwnersNeeded);
  return measured !== undefined && estimateContradicted(market.settings.terms, job.declaredWorkPerTask, measured);
}

/** Whether the estimate is contradicted once `measure`'s sample is counted too. */
export function contradictedAfter(market: Market, job: LiveJob, measure: RunMeasure | null): boolean {
  return contradicted(market, measure?.sample ? { ...job, workSamples: [...job.workSamples, measure.sample] } : job);
}

/**
 * Whether what the measured work would be charged (ledger/contradicted.ts) is over the most the
 * consumer allows, once `measure` is counted: the job stops there, rather than complete for less
 * than the work it turned out to be.
 */
export function overSpendLimit(market: Market, job: LiveJob, measure: RunMeasure | null): boolean {
  const samples = measure?.sample ? [...job.workSamples, measure.sample] : job.workSamples;
  const measured = measuredWork(samples, market.settings.terms.workOwnersNeeded);
  if (job.pricing !== "posted" || measured === undefined || !estimateContradicted(market.settings.terms, job.declaredWorkPerTask, measured)) return false;
  const price = Number(job.priceMicro) / 1e6;
  return contradictedCharge(job, price, measured) > Number(job.maxSpendMicro ?? job.priceMicro) / 1e6;
}

/**
 * Where a piece of `amount` is paid from when the escrow has `free` beyond its held pieces: the
 * escrow as far as it goes, the market for the rest. When the estimate was contradicted, a piece
 * the escrow cannot cover means the consumer's spending limit is reached: the job stops.
 */
export function splitPiece(market: Market, job: LiveJob, amount: bigint, free: bigint) {
  const fromEscrow = amount < free ? amount : free > 0n ? free : 0n;
  const fromMarket = amount - fromEscrow;
  return { fromEscrow, fromMarket, exhausted: fromMarket > 0n && contradicted(market, job) };
}

/** What a successful run measured: a sample of its job's work (and the work leases are fixed at after it), and its machine's speed. */
export interface RunMeasure {
  sample: WorkSample | null;
  workPerTask: number;
  speed: number | null;
}

/**
 * A run on time of a machine not tied to the consumer measures its job's work (its first
 * `workSamplesKept` such runs: costbenefit workSample, the market's clock lowered by the claim); a
 * run of known work that started at once and is long enough to measure lowers (never raises past
 * its benchmark) its machine's speed. Null when it measures nothing.
 */
export function measureRun(market: Market, c: Pick<Completion, "lease" | "machine" | "report" | "task" | "late">, now: number): RunMeasure | null {
  const t = market.settings.terms;
  const job = market.state.jobs.get(c.task.jobId);
  if (!job || c.late) return null;
  const { machine, lease } = c;
  const observedSeconds = (now - lease.issuedAt) / 1000;
  const independent = machine.ownerId !== job.ownerId && (job.submitNetwork === null || machine.network !== job.submitNetwork);
  const sample = independent && job.workSamples.length < t.workSamplesKept ? { owner: machine.ownerId, work: workSample({ observedSeconds, reportedSeconds: c.report.elapsedMs / 1000, speed: machine.speed }) } : null;
  const samples = sample === null ? job.workSamples : [...job.workSamples, sample];
  // A provisional job's pilots only gather samples: the rest is planned from them (remainder.ts).
  const workPerTask = job.pilots?.phase === "provisional" ? job.workPerTask : workAtLease(t, job.declaredWorkPerTask, samples);
  const known = measuredWork(samples, t.workOwnersNeeded);
  let speed: number | null = null;
  if (known !== undefined && !lease.pilot && lease.ahead < machine.slots && known / machine.speed >= t.speedSampleMinSeconds) {
    const next = measuredSpeed(t, { benchmark: machine.benchmarkSpeed, current: machine.speed }, { work: known, observedSeconds });
    if (Math.abs(next - machine.speed) > 0.02 * machine.speed) speed = next;
  }
  if (sample === null && speed === null) return null;
  return { sample, workPerTask, speed };
}
