import { z } from "zod";
import type { Db } from "../db/client.ts";
import { refuse } from "../api/errors.ts";
import { lockSpendable, post, toCredits, toMicro, type Tx } from "./ledger.ts";
import { earningsTransfer, earningsTransferKey } from "./entries.ts";

// A user who sells and buys pays for their own jobs with what their machines earned: one click
// moves their producer account's balance (or part of it) to their consumer account, one balanced
// entry between two accounts of theirs. The page makes an id per move, and the entry's unique key
// is that id, so a double click moves nothing more; and a move never takes more than the producer
// account holds (the ledger's debit is conditional on it).

export const EarningsTransfer = z.object({
  transferId: z.uuid("transferId must be a UUID, one per move."),
  /** How much to move; all of the producer balance when left out. */
  credits: z
    .number({ error: "Credits must be a number." })
    .positive("Move more than 0 credits.")
    .max(1_000_000_000, "At most 1,000,000,000 credits at once.")
    .refine((c) => Math.abs(c * 1e6 - Math.round(c * 1e6)) < 1e-3, "Credits have at most 6 decimals.")
    .optional(),
});
export type EarningsTransfer = z.infer<typeof EarningsTransfer>;

/** The rule's one writer is entries.ts `earningsTransfer`. */
export const postEarningsTransfer = (tx: Tx, t: Parameters<typeof earningsTransfer>[0]) => post(tx, earningsTransfer(t));

/**
 * Moves the caller's producer earnings to their consumer balance. Refused, changing nothing, when
 * there is nothing to move or more is asked than the producer account holds (insufficient-credits
 * on the producer account). The same transferId again answers what the first call moved.
 */
export async function transferEarnings(db: Db, userId: string, input: EarningsTransfer) {
  const moved = await db.$transaction(async (tx) => {
    // All of it: what the account holds under its row's lock, so a payment another manager writes meanwhile waits, and stays.
    const amount = input.credits === undefined ? await lockSpendable(tx, { kind: "producer", userId }) : toMicro(input.credits);
    const done = amount > 0n && (await postEarningsTransfer(tx, { transferId: input.transferId, userId, amount }));
    return done ? amount : null;
  });
  if (moved !== null) return { moved: toCredits(moved), already: false };
  const earlier = await db.ledgerEntry.findUnique({
    where: { uniqueKey: earningsTransferKey(input.transferId) },
    select: { postings: { where: { amountMicro: { gt: 0n } }, select: { amountMicro: true, account: { select: { userId: true } } } } },
  });
  // Another user's id is no answer to this one's request.
  const credit = earlier?.postings[0];
  if (credit && credit.account.userId === userId) return { moved: toCredits(credit.amountMicro), already: true };
  if (credit) throw refuse.conflict({ code: "invalid-input", issues: [{ path: ["transferId"], message: "This id was used for another move." }] }, "transferId: This id was used for another move.");
  throw refuse.badRequest({ code: "no-earnings-to-move" }, "You have no producer earnings to move.");
}
