// The money of the second step of a job run as pilots first (pilots.ts decideRemainder): what the
// rest may spend and what more its escrow must take from the consumer. Credits as floats; the
// Market Manager rounds once, when they become money.
import { escrowFor } from "./settlement.ts";

export interface RemainderEscrowInput {
  pricing: "posted" | "bid";
  /** The rest's price as admitted (0 when not admitted), and the highest benefit of its lowered curve (loweredBenefit). */
  price: number;
  maxBenefit: number;
  /** The consumer's maxSpend for the whole job, if they set one. */
  maxSpend: number | undefined;
  /** What the pilots were priced at, and what the job's escrow holds for them. */
  pilotPrice: number;
  pilotEscrow: number;
}

/** What the rest of a job may spend: the job's maxSpend less the pilots' price, which is spent of it already. */
export function remainderMaxSpend(maxSpend: number | undefined, pilotPrice: number): number | undefined {
  return maxSpend === undefined ? undefined : Math.max(0, maxSpend - Math.max(0, pilotPrice));
}

/**
 * What the rest's escrow must hold (escrowFor, at the rest's maxSpend) and what of it is taken
 * from the consumer's balance: the pilots have run, so what their escrow holds beyond their price
 * (the contingency for their runs) backs the rest, and only the difference is `needed`.
 */
export function remainderEscrow(e: RemainderEscrowInput): { escrow: number; needed: number } {
  const escrow = escrowFor({ pricing: e.pricing, price: e.price, maxSpend: remainderMaxSpend(e.maxSpend, e.pilotPrice), maxBenefit: e.maxBenefit });
  const spare = Math.max(0, e.pilotEscrow - e.pilotPrice);
  return { escrow, needed: Math.max(0, escrow - spare) };
}
