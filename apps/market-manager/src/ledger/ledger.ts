import type { Db } from "../db/client.ts";
import { Refusal, type Reason } from "../api/errors.ts";
import { FloorCrossed, runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { applyLedger, ledgerParams, lockedSpendable } from "../db/sql/ledger-rows.ts";
import { MARKET_OWNER, type AccountRef, type Entry } from "./entries.ts";

// A double-entry ledger in micro-credits. Every entry's postings sum to zero, so the sum of all
// accounts is always zero. No account goes below its floor (a check constraint): zero for
// consumers, producers and escrows, minus the configured reserve for the market. Unique keys make
// "settled exactly once" and "paid exactly once" constraints of the database, not hopes. Which
// accounts each rule moves is written once, in entries.ts.

export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
export const MICRO = 1_000_000n;

export type { AccountRef, Posting, Entry } from "./entries.ts";
export { MARKET_OWNER } from "./entries.ts";

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

/**
 * Records one entry (ledger/entries.ts) in the transaction `tx`. Returns false, changing nothing,
 * when an entry with the same unique key exists already; throws LedgerError when an account would
 * go below its floor (the transaction is then no longer usable: the caller lets it fail).
 */
export async function post(tx: Tx, entry: Entry): Promise<boolean> {
  try {
    const [row] = await runStatement(viaPrisma(tx), applyLedger, ledgerParams([entry]));
    return (row?.posted ?? 0) > 0;
  } catch (e) {
    if (!(e instanceof FloorCrossed)) throw e;
    throw await shortOf(entry);
  }
}

/** Which debit of `entry` its account could not cover, read after the failed statement. */
async function shortOf(entry: Entry): Promise<LedgerError> {
  const debit = entry.postings.find((p) => p.amount < 0n) ?? entry.postings[0]!;
  return new LedgerError({ code: "insufficient-credits", account: debit.account.kind, needed: toCredits(-debit.amount) });
}

/** What an account may still spend: its balance above its floor. */
export async function spendable(db: Db | Tx, ref: AccountRef): Promise<bigint> {
  const row = await db.ledgerAccount.findFirst({ where: accountWhere(ref), select: { balanceMicro: true, minBalanceMicro: true } });
  const b = row ? row.balanceMicro - row.minBalanceMicro : 0n;
  return b > 0n ? b : 0n;
}

/**
 * What a user's or the market's account may still spend, its row locked until `tx` ends: for a
 * write whose amount depends on it (several Market Managers move these accounts at once, so a
 * value read without the lock may be gone by the write).
 */
export async function lockSpendable(tx: Tx, ref: Exclude<AccountRef, { kind: "escrow" }>): Promise<bigint> {
  const [row] = await runStatement(viaPrisma(tx), lockedSpendable, { kind: ref.kind, userId: ref.kind === "market" ? MARKET_OWNER : ref.userId });
  return row ? BigInt(row.spendable) : 0n;
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
