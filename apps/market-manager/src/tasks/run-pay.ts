// What one reported run is worth and what it measured, by the engine's rules (costbenefit
// settlement.ts): the piece rate its lease carries (a pilot's: the work the market's clock vouches
// for, up to the most its lease states), where that piece is paid from, and the run's sample of
// its job's work and of its machine's speed. Pure functions of memory; results.ts and
// report-rows.ts write what they answer.
import { contradictedWork, measuredWork, measuredWorkCharge, pilotPay, speedAfterRun, workAtLease, workSampleOf, type WorkSample } from "@cyclemarket/costbenefit";
import type { Market } from "../market/market.ts";
import { askOf, type LiveJob } from "../market/live.ts";
import { toCredits, toMicro } from "../ledger/ledger.ts";
import type { Completion } from "./results.ts";

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

/** The work measured so far when it contradicts the consumer's estimate (the engine's contradictedWork), else undefined. */
const contradictedBy = (market: Market, job: LiveJob, samples: readonly WorkSample[] = job.workSamples) =>
  contradictedWork(market.settings.terms, { pricing: job.pricing, declaredWork: job.declaredWorkPerTask, samples });

/** Whether the work measured so far contradicts the consumer's estimate. */
export function contradicted(market: Market, job: LiveJob): boolean {
  return contradictedBy(market, job) !== undefined;
}

/** Whether the estimate is contradicted once `measure`'s sample is counted too. */
export function contradictedAfter(market: Market, job: LiveJob, measure: RunMeasure | null): boolean {
  return contradictedBy(market, job, measure?.sample ? [...job.workSamples, measure.sample] : job.workSamples) !== undefined;
}

/**
 * Whether what the measured work would be charged (costbenefit measuredWorkCharge) is over the most the
 * consumer allows, once `measure` is counted: the job stops there, rather than complete for less
 * than the work it turned out to be.
 */
export function overSpendLimit(market: Market, job: LiveJob, measure: RunMeasure | null): boolean {
  const charge = contradictedCharge(market, job, measure?.sample ? [...job.workSamples, measure.sample] : job.workSamples);
  return charge !== null && charge > toCredits(job.maxSpendMicro ?? job.priceMicro);
}

/**
 * What the job is charged at the work measured so far (with `samples`) when it contradicts the
 * consumer's estimate (costbenefit measuredWorkCharge), before maxSpend caps it; null while the
 * estimate holds.
 */
export function contradictedCharge(market: Market, job: LiveJob, samples: readonly WorkSample[] = job.workSamples): number | null {
  const measured = contradictedBy(market, job, samples);
  return measured === undefined ? null : measuredWorkCharge({ price: toCredits(job.priceMicro), declaredWork: job.declaredWorkPerTask, priceAtWork: job.priceAtWork }, measured);
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
 * A run measures its job's work when the engine says its machine may (workSampleOf: not tied to
 * the consumer, among the first `workSamplesKept`), a late one up to its lease's end; a run on time
 * also measures its machine's speed when it is a run of known work that started at once
 * (speedAfterRun). Null when it measures nothing.
 */
export function measureRun(market: Market, c: Pick<Completion, "lease" | "machine" | "report" | "task" | "late">, now: number): RunMeasure | null {
  const t = market.settings.terms;
  const job = market.state.jobs.get(c.task.jobId);
  if (!job) return null;
  const { machine, lease } = c;
  // A run reported after its lease ended measures the lease's time, as one held to its last moment
  // would: the work took at least that long by the market's clock, so an estimate too small for
  // its own leases is contradicted all the same, and holding a result longer proves nothing more.
  const observedSeconds = ((c.late ? Math.min(now, lease.expiresAt) : now) - lease.issuedAt) / 1000;
  const sample = workSampleOf(
    t,
    { observedSeconds, reportedSeconds: c.report.elapsedMs / 1000, owner: machine.ownerId, speed: machine.speed, network: machine.network },
    { owner: job.ownerId, submitNetwork: job.submitNetwork, samplesTaken: job.workSamples.length },
  );
  const samples = sample === null ? job.workSamples : [...job.workSamples, sample];
  // A provisional job's pilots only gather samples: the rest is planned from them (remainder.ts).
  const workPerTask = job.pilots?.phase === "provisional" ? job.workPerTask : workAtLease(t, job.declaredWorkPerTask, samples);
  // A late run's time is not its machine's speed: it measures the job's work only.
  const speed = c.late
    ? null
    : speedAfterRun(t, {
        knownWork: measuredWork(samples, t.workOwnersNeeded),
        pilot: lease.pilot,
        ahead: lease.ahead,
        slots: machine.slots,
        observedSeconds,
        speed: machine.speed,
        benchmark: machine.benchmarkSpeed,
      });
  if (sample === null && speed === null) return null;
  return { sample, workPerTask, speed };
}
