import type { Db } from "../db/client.ts";
import { toJson } from "../db/client.ts";

// A double-entry ledger in micro-credits. Every entry's postings sum to zero, so the sum of all
// accounts is always zero; consumer, producer and escrow accounts never go below zero (the
// market's may: it pays producers before consumers pay it). Unique keys make "settled exactly
// once" and "paid exactly once" constraints of the database, not hopes.

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

export class LedgerError extends Error {
  constructor(readonly reason: { code: string; [k: string]: unknown }) {
    super(reason.code);
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
    if (p.amount < 0n && p.account.kind !== "market") {
      // A conditional update: the debit happens only if the balance covers it.
      const { count } = await tx.ledgerAccount.updateMany({
        where: { id, balanceMicro: { gte: -p.amount } },
        data: { balanceMicro: { increment: p.amount } },
      });
      if (count !== 1) {
        const row = await tx.ledgerAccount.findUniqueOrThrow({ where: { id } });
        throw new LedgerError({ code: "insufficient-credits", account: p.account.kind, balance: Number(row.balanceMicro) / 1e6, needed: Number(-p.amount) / 1e6 });
      }
    } else {
      await tx.ledgerAccount.update({ where: { id }, data: { balanceMicro: { increment: p.amount } } });
    }
    await tx.ledgerPosting.create({ data: { entryId: created.id, accountId: id, amountMicro: p.amount } });
  }
  return true;
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
