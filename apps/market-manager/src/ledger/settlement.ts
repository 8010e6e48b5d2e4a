// The service's side of the engine's settlement (costbenefit settlement.ts): it gathers what the
// engine needs from the ledger and the market's own records (the escrow, the late runs' held
// pieces, the market's downtime), asks the engine, and posts the one entry entries.ts writes for
// the answer. It decides nothing of its own.
import { benefitAt, benefitWithoutDowntime, settleJob, settleUnfinishedJob, type BenefitCurve, type UnfinishedInput, type HeldPiece, type Settlement } from "@cyclemarket/costbenefit";
import type { Market } from "../market/market.ts";
import type { LiveJob } from "../market/live.ts";
import { balance, post, toCredits, toMicro, type Tx } from "./ledger.ts";
import { settlement, type Entry } from "./entries.ts";
import { contradictedCharge } from "../tasks/run-pay.ts";
import { relatedProducers } from "../auth/related-accounts.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { heldByProducer, jobDeposit, latePieces } from "../db/sql/job-money.ts";

/** The job's part of the market's downtime while it ran: the seconds between its arrival and `now` the market was down. */
export function downtimeDuring(market: Market, from: number, to: number): number {
  let ms = 0;
  for (const o of market.outages) ms += Math.max(0, Math.min(o.endedAt, to) - Math.max(o.startedAt, from));
  return ms / 1000;
}

/** The engine's settlement input of `job` completing at `now`, but for its held pieces. */
export function completedInput(market: Market, job: LiveJob, now: number, held: readonly HeldPiece[]) {
  const curve = job.benefit as BenefitCurve;
  const took = (now - job.arrivedAt) / 1000;
  const down = downtimeDuring(market, job.arrivedAt, now);
  const charge = contradictedCharge(market, job);
  const price = toCredits(job.priceMicro);
  return {
    pricing: job.pricing,
    price,
    maxSpend: toCredits(job.maxSpendMicro ?? job.priceMicro),
    benefit: benefitAt(curve, took),
    benefitWithoutDowntime: benefitWithoutDowntime(curve, { took, down, planned: job.plannedAt === null ? undefined : (job.plannedAt - job.arrivedAt) / 1000 }),
    contradicted: charge === null ? null : { charge },
    held,
    took,
  };
}

/**
 * The settlement entry of a completed job whose escrow holds `heldInEscrow` now, from the engine's
 * answer: the consumer gets back what they put in less the charge, the late producers their held
 * pieces less the relief they paid for, the market the rest. Also `charged`: what the consumer paid.
 */
export function completedEntry(job: LiveJob, heldInEscrow: bigint, s: Settlement, took: number): { entry: Entry; charged: bigint } {
  // The engine's floats become money once, here.
  const charged = toMicro(s.charge);
  const heldPaid = s.heldPaid.map((h) => ({ producerId: h.producerId, amount: toMicro(h.amount) })).filter((h) => h.amount > 0n);
  const entry = settlement({
    jobId: job.id,
    consumerId: job.ownerId,
    held: heldInEscrow,
    refund: job.escrowMicro - charged,
    heldPaid,
    memo: {
      seconds: took,
      chargeMicro: charged.toString(),
      reliefFromLateMicro: s.reliefFromLate.reduce((t, r) => t + toMicro(r.amount), 0n).toString(),
      reliefFromMarketMicro: toMicro(s.reliefFromMarket).toString(),
      terms: s.reasons,
    },
  });
  return { entry, charged };
}

/** The held pieces of a job's late runs, in the order they were accepted, each marked if tied to the consumer. */
async function heldPieces(tx: Tx, job: LiveJob): Promise<HeldPiece[]> {
  const rows = await runStatement(viaPrisma(tx), latePieces, { jobId: job.id });
  if (!rows.length) return [];
  const related = await relatedProducers(tx, { consumerId: job.ownerId, network: job.submitNetwork }, rows);
  return rows.map((r) => ({ producerId: r.ownerId, amount: toCredits(BigInt(r.held)), related: related.has(r.ownerId) }));
}

/** Settles a completed job in `tx` by the engine's rule; returns what the consumer was charged. */
export async function settleCompleted(tx: Tx, market: Market, job: LiveJob, now: number): Promise<bigint> {
  const inEscrow = await balance(tx, { kind: "escrow", jobId: job.id });
  const input = completedInput(market, job, now, await heldPieces(tx, job));
  const { entry, charged } = completedEntry(job, inEscrow, settleJob(input), input.took);
  await post(tx, entry);
  return charged;
}

export type UnfinishedWhy = UnfinishedInput["why"];

/**
 * A job that ends without completing (cancelled, failed, stopped at its spending limit, its rest
 * rejected), settled by the engine's rule (costbenefit settleUnfinishedJob): the quote's share of
 * the tasks done, or what its producers were paid from its escrow when that is more (a job without
 * an agreed price: what they were paid). The late producers get their held pieces (their results
 * were accepted); the rest goes back to the consumer.
 */
export async function settleUnfinished(tx: Tx, s: { jobId: string; consumerId: string; why: UnfinishedWhy }): Promise<bigint> {
  const inEscrow = await balance(tx, { kind: "escrow", jobId: s.jobId });
  const [job] = await runStatement(viaPrisma(tx), jobDeposit, { jobId: s.jobId });
  const held = await runStatement(viaPrisma(tx), heldByProducer, { jobId: s.jobId });
  const heldPaid = held.map((h) => ({ producerId: h.ownerId, amount: BigInt(h.held) }));
  const toProducers = heldPaid.reduce((t, h) => t + h.amount, 0n);
  const deposit = job ? BigInt(job.escrow) : inEscrow;
  // What the producers were paid of the escrow: what left it, and what it still holds for them.
  const paid = deposit - inEscrow + toProducers;
  const decided = settleUnfinishedJob({
    why: s.why,
    provisional: job?.provisional ?? true,
    price: toCredits(job?.price ? BigInt(job.price) : 0n),
    tasks: job?.tasks ?? 0,
    done: job?.done ?? 0,
    failed: job?.failed ?? 0,
    paid: toCredits(paid),
    escrow: toCredits(deposit),
  });
  // The engine's floats become money once, here (its charge lies between what was paid and the deposit, which convert back exactly).
  const charged = toMicro(decided.charge);
  const refund = deposit - charged;
  await post(
    tx,
    settlement({ jobId: s.jobId, consumerId: s.consumerId, held: inEscrow, refund, heldPaid, memo: { why: s.why, chargeMicro: charged.toString(), terms: decided.reasons } }),
  );
  return charged;
}
