// docs/DESIGN.md "Dedicated purchase rule" (the Java Market paper, 5.5.2: dedicated machines "should be purchased
// based on the price the system would put on that resource immediately after accepting it").
import { resourceCostSlopeLn } from "../cost.ts";
import type { OfferDecision } from "../decision.ts";
import { DedicatedOffer, type DedicatedOfferInput } from "../machine.ts";
import type { MarketState } from "../state/market-state.ts";

/** What one account's record is, for the contracts the market may promise it. */
export interface ContractStanding {
  /** The account confirmed its address. */
  confirmed: boolean;
  /** Results of its machines the market accepted. */
  acceptedResults: number;
}

/** What any account may be promised in contracts at once, and what a confirmed one may. */
export const CONTRACT_CEILING_NEW = 1;
export const CONTRACT_CEILING_CONFIRMED = 10;
/** What each accepted result adds to it, up to CONTRACT_CEILING_MAX. */
export const CONTRACT_CEILING_PER_RESULT = 0.1;
export const CONTRACT_CEILING_MAX = 1_000_000;

/**
 * The most the market may owe one account in dedicated contracts at once (credits): a contract is
 * paid from the market's own account for capacity the machine has yet to prove, so an account that
 * has proved little is promised little. It grows with the results the market accepted from it.
 */
export function contractCeiling(s: ContractStanding): number {
  const base = s.confirmed ? CONTRACT_CEILING_CONFIRMED : CONTRACT_CEILING_NEW;
  return Math.min(CONTRACT_CEILING_MAX, base + CONTRACT_CEILING_PER_RESULT * Math.max(0, s.acceptedResults));
}

/** A dedicated offer the account's standing does not cover (`promised`: what its contracts still owe it), or null. */
export function contractOverStanding(contractPrice: number, s: ContractStanding, promised: number) {
  const ceiling = contractCeiling(s);
  return contractPrice + promised > ceiling ? { code: "offer-over-standing" as const, contractPrice, ceiling, promised } : null;
}

/**
 * Accept iff the contract price is at most the value of the compute the machine adds over
 * [now, dp), priced at the market's current unit quote: the cheapest linearized marginal cost
 * per work unit among the machines already there (with n + 1 machines). The offered machine's own
 * idle quote is not used: it is P ln(n) / (capacity H), so capacity x time x quote would not depend
 * on the machine's size or on how busy the market is.
 */
export function considerDedicatedOffer(state: MarketState, input: DedicatedOfferInput, now: number, budget = Infinity): OfferDecision {
  const offer = DedicatedOffer.parse(input);
  if (offer.departureAt <= now) return { accept: false, reasons: [{ code: "offer-expired", departureAt: offer.departureAt, now }] };
  const s = state.settings;
  const n = Math.max(2, state.machineCount + 1);
  const m = state.machines;
  let unitPrice = Infinity;
  for (let row = 0; row < m.end; row++) {
    if (m.live(row)) unitPrice = Math.min(unitPrice, state.unitKey(row, now, n));
  }
  const capacityWork = offer.speed * offer.slots * (offer.departureAt - now);
  // An empty market: the offered machine's own idle quote.
  if (!Number.isFinite(unitPrice)) unitPrice = (s.priceConstant * resourceCostSlopeLn(Math.log(n), 0, s.horizonSeconds)) / (offer.speed * offer.slots);
  const value = capacityWork * unitPrice;
  const data = { contractPrice: offer.contractPrice, value, capacityWork, unitPrice };
  if (offer.contractPrice > value) return { accept: false, reasons: [{ code: "offer-too-expensive", ...data }] };
  // The market pays contracts from its own account, which may spend only its reserve and what its
  // fees earned: a contract it could not honour is refused however cheap it looks.
  if (offer.contractPrice > budget) return { accept: false, reasons: [{ code: "offer-unaffordable", contractPrice: offer.contractPrice, budget: Math.max(0, budget) }] };
  return { accept: true, reasons: [{ code: "offer-accepted", ...data }] };
}
