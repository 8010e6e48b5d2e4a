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

/**
 * Admission puts the consumer's escrow for the job aside (the most they can be charged) and, for
 * a curve that can go negative, the market's penalty hold beside it, from the market's reserve.
 */
export function escrowJob(tx: Tx, jobId: string, consumerId: string, amount: bigint, penaltyHeld = 0n, part: "remainder" | null = null) {
  return post(tx, {
    kind: "escrow",
    // A job run as pilots first escrows its remainder on its own when the engine admits it.
    uniqueKey: part ? `escrow:${jobId}:${part}` : `escrow:${jobId}`,
    jobId,
    memo: { maxBenefitMicro: amount.toString(), penaltyHeldMicro: penaltyHeld.toString() },
    postings: [
      { account: { kind: "consumer", userId: consumerId }, amount: -amount },
      { account: { kind: "market" }, amount: -penaltyHeld },
      { account: { kind: "escrow", jobId }, amount: amount + penaltyHeld },
    ],
  });
}

/**
 * A run is paid out of its job's escrow, the consumer's money for that job, never from an
 * unbounded market account: seconds the market vouches for x cps(m) (costbenefit `runPay`).
 * Failed runs are paid by the same rule; a copy that disagreed with its quorum is not paid.
 */
export function payRun(
  tx: Tx,
  p: { resultId: string; jobId: string; taskId: string; producerId: string; machineId: string; amount: bigint; seconds: number; reportedSeconds: number; failed: boolean },
) {
  return post(tx, {
    kind: "payment",
    uniqueKey: `pay:${p.resultId}`,
    jobId: p.jobId,
    taskId: p.taskId,
    memo: { machineId: p.machineId, seconds: p.seconds, reportedSeconds: p.reportedSeconds, failed: p.failed },
    postings: [
      { account: { kind: "escrow", jobId: p.jobId }, amount: -p.amount },
      { account: { kind: "producer", userId: p.producerId }, amount: p.amount },
    ],
  });
}

/**
 * What producers were paid out of job $1's escrow so far, as text: the producers' postings of its
 * payment entries. One definition for the settlement and the job page (tasks/views.ts), so the
 * charge a page shows and the one the ledger makes never count payments differently.
 */
export const PAID_FOR_JOB_SQL = paidForJobSql("$1");

/** PAID_FOR_JOB_SQL for the job named by a column or expression of the statement it is part of, as a bigint. */
export function paidForJobSql(job: string) {
  return `SELECT coalesce(sum(p."amountMicro"), 0)::text FROM "LedgerPosting" p JOIN "LedgerEntry" e ON e.id = p."entryId" JOIN "LedgerAccount" a ON a.id = p."accountId"
     WHERE e."jobId" = ${job} AND e.kind = 'payment' AND a.kind = 'producer'::"AccountKind"`;
}

/** What producers were paid out of a job's escrow so far (PAID_FOR_JOB_SQL). */
export async function paidForJob(tx: Tx, jobId: string): Promise<bigint> {
  const [row] = await tx.$queryRawUnsafe<{ paid: string }[]>(`SELECT (${PAID_FOR_JOB_SQL}) AS paid`, jobId);
  return BigInt(row!.paid);
}

/**
 * The job completed t seconds after it arrived: the consumer is charged what the engine's
 * `settleCharge` says (b(j, t), at least the producer time already paid from escrow), the market
 * keeps the charge less those payments and gets back its penalty hold less any compensation paid,
 * and the consumer gets the rest of the escrow.
 */
export async function settleCompleted(tx: Tx, s: CompletedSettlement & { jobId: string; consumerId: string }) {
  const held = await balance(tx, { kind: "escrow", jobId: s.jobId });
  const { toMarket, memo, charged } = completedEntry(s);
  await post(tx, {
    kind: "settlement",
    uniqueKey: `settle:${s.jobId}`,
    jobId: s.jobId,
    memo,
    postings: [
      { account: { kind: "escrow", jobId: s.jobId }, amount: -held },
      { account: { kind: "market" }, amount: toMarket },
      // Kept when zero: the consumer's statement shows the job was settled even if nothing came back.
      { account: { kind: "consumer", userId: s.consumerId }, amount: held - toMarket, keep: true },
    ],
  });
  return charged;
}

/** A completed job's settlement terms: the engine's charge and compensation, as money, with what was paid. */
export interface CompletedSettlement {
  charge: bigint;
  compensation: bigint;
  penaltyHeld: bigint;
  paidToProducers: bigint;
  seconds: number;
  memo: unknown;
}

/**
 * What a completed job's settlement entry moves besides its escrow, whatever writes it (settleCompleted
 * here, or a group's statement, tasks/report-rows.ts): the market keeps the charge less the
 * producers' payments and gets back its penalty hold less any compensation; the consumer gets the
 * rest of the escrow. `charged` is what the consumer paid in the end.
 */
export function completedEntry(s: CompletedSettlement) {
  const paid = s.paidToProducers;
  return {
    toMarket: s.charge - paid + (s.penaltyHeld - s.compensation),
    charged: s.charge - s.compensation,
    memo: { seconds: s.seconds, chargeMicro: s.charge.toString(), compensationMicro: s.compensation.toString(), paidToProducersMicro: paid.toString(), terms: s.memo },
  };
}

/**
 * A job that ends without completing (cancelled by its consumer, or failed) is charged what its
 * producers were already paid out of its escrow; the market takes back its penalty hold and the
 * rest goes back to the consumer.
 */
export async function settleUnfinished(tx: Tx, s: { jobId: string; consumerId: string; why: "cancelled" | "failed" | "escrow-exhausted" | "remainder-rejected"; penaltyHeld: bigint }) {
  const held = await balance(tx, { kind: "escrow", jobId: s.jobId });
  const paid = await paidForJob(tx, s.jobId);
  const toMarket = s.penaltyHeld < held ? s.penaltyHeld : held;
  await post(tx, {
    kind: "settlement",
    uniqueKey: `settle:${s.jobId}`,
    jobId: s.jobId,
    memo: { why: s.why, paidToProducersMicro: paid.toString() },
    postings: [
      { account: { kind: "escrow", jobId: s.jobId }, amount: -held },
      { account: { kind: "market" }, amount: toMarket },
      // Kept when zero: the consumer's statement shows the job was settled even if nothing came back.
      { account: { kind: "consumer", userId: s.consumerId }, amount: held - toMarket, keep: true },
    ],
  });
  return paid;
}

/**
 * A dedicated machine is paid its contract as the market hears it present (costbenefit
 * `contractAccrual`), from the market's own account, which may not go below minus its reserve.
 */
export function payContract(tx: Tx, c: { machineId: string; producerId: string; amount: bigint; fromMs: number; toMs: number }) {
  return post(tx, {
    kind: "contract",
    uniqueKey: `contract:${c.machineId}:${c.fromMs}`,
    memo: { machineId: c.machineId, from: new Date(c.fromMs).toISOString(), to: new Date(c.toMs).toISOString() },
    postings: [
      { account: { kind: "market" }, amount: -c.amount },
      { account: { kind: "producer", userId: c.producerId }, amount: c.amount },
    ],
  });
}
