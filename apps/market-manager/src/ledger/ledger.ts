import type { Db } from "../db/client.ts";
import { Refusal, type Reason } from "../api/errors.ts";
import { toJson } from "../db/client.ts";

// A double-entry ledger in micro-credits. Every entry's postings sum to zero, so the sum of all
// accounts is always zero. No account goes below its floor: zero for consumers, producers and
// escrows, minus the configured reserve for the market, which only grants, buys dedicated time
// and backs penalties (producers are paid out of the job's escrow). Unique keys make "settled
// exactly once" and "paid exactly once" constraints of the database, not hopes.

export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
export const MICRO = 1_000_000n;

export type AccountRef =
  | { kind: "market" }
  | { kind: "consumer"; userId: string }
  | { kind: "producer"; userId: string }
  | { kind: "escrow"; jobId: string };

export interface Posting {
  account: AccountRef;
  /** Micro-credits; positive credits the account, negative debits it. */
  amount: bigint;
  /** Record the posting even when it is zero, so the account's statement shows the event. */
  keep?: boolean;
}

/**
 * A debit the ledger refused (it would take an account below its floor). A refusal like any
 * other: the caller is told why in the market's vocabulary, never an internal error.
 */
export class LedgerError extends Refusal {
  constructor(reason: Extract<Reason, { code: "insufficient-credits" }>) {
    super(
      "PRECONDITION_FAILED",
      reason,
      `The ${reason.account ?? "account"} balance of ${reason.balance ?? 0} credits cannot cover ${reason.needed} credits.`,
    );
  }
}

const MARKET_OWNER = "market";

async function accountId(tx: Tx, ref: AccountRef): Promise<string> {
  if (ref.kind === "escrow") {
    const row = await tx.ledgerAccount.upsert({
      where: { jobId: ref.jobId },
      create: { kind: "escrow", jobId: ref.jobId },
      update: {},
    });
    return row.id;
  }
  const userId = ref.kind === "market" ? MARKET_OWNER : ref.userId;
  const row = await tx.ledgerAccount.upsert({
    where: { kind_userId: { kind: ref.kind, userId } },
    create: { kind: ref.kind, userId },
    update: {},
  });
  return row.id;
}

/**
 * Records one balanced entry. Returns false (and changes nothing) when an entry with the same
 * unique key exists already; throws LedgerError when an account other than the market's would
 * go below zero.
 */
export async function post(
  tx: Tx,
  entry: { kind: string; uniqueKey: string; jobId?: string; taskId?: string; memo?: unknown; postings: Posting[] },
): Promise<boolean> {
  const postings = entry.postings.filter((p) => p.amount !== 0n || p.keep);
  const sum = postings.reduce((s, p) => s + p.amount, 0n);
  if (sum !== 0n) throw new Error(`unbalanced ledger entry ${entry.uniqueKey}: postings sum to ${sum}`);
  if (await tx.ledgerEntry.findUnique({ where: { uniqueKey: entry.uniqueKey }, select: { id: true } })) return false;
  const created = await tx.ledgerEntry.create({
    data: { kind: entry.kind, uniqueKey: entry.uniqueKey, jobId: entry.jobId, taskId: entry.taskId, memo: toJson(entry.memo ?? {}) },
  });
  for (const p of postings) {
    const id = await accountId(tx, p.account);
    if (p.amount < 0n) {
      // A conditional update: the debit happens only if the balance stays at or above its floor.
      const count = await tx.$executeRaw`UPDATE "LedgerAccount" SET "balanceMicro" = "balanceMicro" + ${p.amount} WHERE "id" = ${id} AND "balanceMicro" + ${p.amount} >= "minBalanceMicro"`;
      if (count !== 1) {
        const row = await tx.ledgerAccount.findUniqueOrThrow({ where: { id } });
        throw new LedgerError({
          code: "insufficient-credits",
          account: p.account.kind,
          balance: toCredits(row.balanceMicro),
          floor: toCredits(row.minBalanceMicro),
          needed: toCredits(-p.amount),
        });
      }
    } else {
      await tx.ledgerAccount.update({ where: { id }, data: { balanceMicro: { increment: p.amount } } });
    }
    await tx.ledgerPosting.create({ data: { entryId: created.id, accountId: id, amountMicro: p.amount } });
  }
  return true;
}

/** What an account may still spend: its balance above its floor. */
export async function spendable(db: Db | Tx, ref: AccountRef): Promise<bigint> {
  const row = await db.ledgerAccount.findFirst({ where: accountWhere(ref), select: { balanceMicro: true, minBalanceMicro: true } });
  const b = row ? row.balanceMicro - row.minBalanceMicro : 0n;
  return b > 0n ? b : 0n;
}

function accountWhere(ref: AccountRef) {
  return ref.kind === "escrow" ? { jobId: ref.jobId } : { kind: ref.kind, userId: ref.kind === "market" ? MARKET_OWNER : ref.userId };
}

/** The market may go down to minus its reserve and no further (admin setting). */
export async function setMarketReserve(db: Db | Tx, reserveMicro: bigint): Promise<void> {
  await db.ledgerAccount.upsert({
    where: { kind_userId: { kind: "market", userId: MARKET_OWNER } },
    create: { kind: "market", userId: MARKET_OWNER, minBalanceMicro: -reserveMicro },
    update: { minBalanceMicro: -reserveMicro },
  });
}

export async function balance(db: Db | Tx, ref: AccountRef): Promise<bigint> {
  const row =
    ref.kind === "escrow"
      ? await db.ledgerAccount.findUnique({ where: { jobId: ref.jobId } })
      : await db.ledgerAccount.findUnique({ where: { kind_userId: { kind: ref.kind, userId: ref.kind === "market" ? MARKET_OWNER : ref.userId } } });
  return row?.balanceMicro ?? 0n;
}

/** Micro-credits from credits (the engine's floats), rounded once, here. */
export const toMicro = (credits: number): bigint => BigInt(Math.round(credits * 1e6));
export const toCredits = (micro: bigint): number => Number(micro) / 1e6;
