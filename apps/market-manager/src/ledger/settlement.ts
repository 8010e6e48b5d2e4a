import { balance, post, type Tx } from "./ledger.ts";

// The market's settlement rules (DESIGN.md "Settlement"), each one balanced entry with a key
// that lets it happen once.

export const grantKey = (userId: string) => `grant:${userId}`;

/** New consumers start with credits from the market, so they can try it at once. */
export function grantStartingCredits(tx: Tx, userId: string, amount: bigint) {
  return post(tx, {
    kind: "grant",
    uniqueKey: grantKey(userId),
    memo: { reason: "starting credits" },
    postings: [
      { account: { kind: "market" }, amount: -amount },
      { account: { kind: "consumer", userId }, amount },
    ],
  });
}

/** Admission puts the job's maximum benefit in escrow. */
export function escrowJob(tx: Tx, jobId: string, consumerId: string, amount: bigint) {
  return post(tx, {
    kind: "escrow",
    uniqueKey: `escrow:${jobId}`,
    jobId,
    memo: { maxBenefitMicro: amount.toString() },
    postings: [
      { account: { kind: "consumer", userId: consumerId }, amount: -amount },
      { account: { kind: "escrow", jobId }, amount },
    ],
  });
}

/** An accepted result pays its producer cps x measured seconds (opportunistic machines). */
export function payProducer(tx: Tx, p: { resultId: string; jobId: string; taskId: string; producerId: string; machineId: string; amount: bigint; seconds: number }) {
  return post(tx, {
    kind: "payment",
    uniqueKey: `pay:${p.resultId}`,
    jobId: p.jobId,
    taskId: p.taskId,
    memo: { machineId: p.machineId, seconds: p.seconds },
    postings: [
      { account: { kind: "market" }, amount: -p.amount },
      { account: { kind: "producer", userId: p.producerId }, amount: p.amount },
    ],
  });
}

/**
 * The job completed t seconds after it arrived: the consumer is charged b(j, t) from escrow and
 * the rest is released; a negative benefit is paid to the consumer by the market.
 */
export async function settleCompleted(tx: Tx, s: { jobId: string; consumerId: string; benefit: bigint; seconds: number }) {
  const held = await balance(tx, { kind: "escrow", jobId: s.jobId });
  const charge = s.benefit < 0n ? s.benefit : s.benefit < held ? s.benefit : held;
  await post(tx, {
    kind: "settlement",
    uniqueKey: `settle:${s.jobId}`,
    jobId: s.jobId,
    memo: { seconds: s.seconds, benefitMicro: s.benefit.toString() },
    postings: [
      { account: { kind: "escrow", jobId: s.jobId }, amount: -held },
      { account: { kind: "market" }, amount: charge },
      // Kept when zero: the consumer's statement shows the job was settled even if nothing came back.
      { account: { kind: "consumer", userId: s.consumerId }, amount: held - charge, keep: true },
    ],
  });
  return charge;
}

/**
 * A job that ends without completing (cancelled by its consumer, or failed) is charged what the
 * market already paid producers for it, up to the escrow; the rest goes back.
 */
export async function settleUnfinished(tx: Tx, s: { jobId: string; consumerId: string; why: "cancelled" | "failed" }) {
  const held = await balance(tx, { kind: "escrow", jobId: s.jobId });
  const paid = await tx.ledgerPosting.aggregate({
    _sum: { amountMicro: true },
    where: { entry: { jobId: s.jobId, kind: "payment" }, account: { kind: "producer" } },
  });
  const owed = paid._sum.amountMicro ?? 0n;
  const charge = owed < held ? owed : held;
  await post(tx, {
    kind: "settlement",
    uniqueKey: `settle:${s.jobId}`,
    jobId: s.jobId,
    memo: { why: s.why, paidToProducersMicro: owed.toString() },
    postings: [
      { account: { kind: "escrow", jobId: s.jobId }, amount: -held },
      { account: { kind: "market" }, amount: charge },
      // Kept when zero: the consumer's statement shows the job was settled even if nothing came back.
      { account: { kind: "consumer", userId: s.consumerId }, amount: held - charge, keep: true },
    ],
  });
  return charge;
}

/** An accepted dedicated machine is paid its whole contract price c(m) at once (seed 003, 5.5.2). */
export function payContract(tx: Tx, c: { machineId: string; producerId: string; amount: bigint }) {
  return post(tx, {
    kind: "contract",
    uniqueKey: `contract:${c.machineId}`,
    memo: { machineId: c.machineId },
    postings: [
      { account: { kind: "market" }, amount: -c.amount },
      { account: { kind: "producer", userId: c.producerId }, amount: c.amount },
    ],
  });
}
