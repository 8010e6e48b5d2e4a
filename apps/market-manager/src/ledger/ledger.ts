import type { Db } from "../db/client.ts";
import { Refusal, type Reason } from "../api/errors.ts";
import { toJson } from "../db/client.ts";
import { rowId } from "../db/row-id.ts";

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

export const MARKET_OWNER = "market";

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
  // One statement per entry, one per posting and one for all postings' rows: an entry is on the
  // path of every report, so no account is looked up before it is moved.
  const [created] = await tx.$queryRaw<{ id: string; createdAt: Date }[]>`
    INSERT INTO "LedgerEntry" (id, kind, "uniqueKey", "jobId", "taskId", memo)
    VALUES (${rowId()}, ${entry.kind}, ${entry.uniqueKey}, ${entry.jobId ?? null}, ${entry.taskId ?? null}, ${JSON.stringify(toJson(entry.memo ?? {}))}::jsonb)
    ON CONFLICT ("uniqueKey") DO NOTHING RETURNING id, "createdAt"`;
  if (!created) return false;
  // Postings carry their entry's time (a statement reads an account's newest by it).
  const rows: { entryId: string; accountId: string; amountMicro: bigint; createdAt: Date }[] = [];
  for (const p of postings) rows.push({ entryId: created.id, accountId: await move(tx, p), amountMicro: p.amount, createdAt: created.createdAt });
  if (rows.length) await tx.ledgerPosting.createMany({ data: rows });
  return true;
}

/** Moves one posting's amount on its account (made on first use) and returns the account's id. */
async function move(tx: Tx, p: Posting): Promise<string> {
  const ref = p.account;
  if (p.amount < 0n) {
    // A conditional update: the debit happens only if the balance stays at or above its floor.
    const [row] =
      ref.kind === "escrow"
        ? await tx.$queryRaw<{ id: string }[]>`UPDATE "LedgerAccount" SET "balanceMicro" = "balanceMicro" + ${p.amount} WHERE "jobId" = ${ref.jobId} AND "balanceMicro" + ${p.amount} >= "minBalanceMicro" RETURNING id`
        : await tx.$queryRaw<{ id: string }[]>`UPDATE "LedgerAccount" SET "balanceMicro" = "balanceMicro" + ${p.amount} WHERE kind = ${ref.kind}::"AccountKind" AND "userId" = ${ownerOf(ref)} AND "balanceMicro" + ${p.amount} >= "minBalanceMicro" RETURNING id`;
    if (row) return row.id;
    const id = await credit(tx, ref, 0n);
    const held = await tx.ledgerAccount.findUniqueOrThrow({ where: { id } });
    throw new LedgerError({
      code: "insufficient-credits",
      account: ref.kind,
      balance: toCredits(held.balanceMicro),
      floor: toCredits(held.minBalanceMicro),
      needed: toCredits(-p.amount),
    });
  }
  return credit(tx, ref, p.amount);
}

/** Adds a non-negative amount to an account, making the account if it is new, in one statement. */
async function credit(tx: Tx, ref: AccountRef, amount: bigint): Promise<string> {
  const [row] =
    ref.kind === "escrow"
      ? await tx.$queryRaw<{ id: string }[]>`
          INSERT INTO "LedgerAccount" (id, kind, "jobId", "balanceMicro") VALUES (${rowId()}, 'escrow', ${ref.jobId}, ${amount})
          ON CONFLICT ("jobId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + EXCLUDED."balanceMicro" RETURNING id`
      : await tx.$queryRaw<{ id: string }[]>`
          INSERT INTO "LedgerAccount" (id, kind, "userId", "balanceMicro") VALUES (${rowId()}, ${ref.kind}::"AccountKind", ${ownerOf(ref)}, ${amount})
          ON CONFLICT (kind, "userId") DO UPDATE SET "balanceMicro" = "LedgerAccount"."balanceMicro" + EXCLUDED."balanceMicro" RETURNING id`;
  return row!.id;
}

const ownerOf = (ref: Exclude<AccountRef, { kind: "escrow" }>) => (ref.kind === "market" ? MARKET_OWNER : ref.userId);

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
