// docs/DESIGN.md "Dedicated purchase rule" (the Java Market paper, 5.5.2: dedicated machines "should be purchased
// based on the price the system would put on that resource immediately after accepting it").
import { resourceCostSlopeLn } from "../cost.ts";
import type { OfferDecision } from "../decision.ts";
import { DedicatedOffer, type DedicatedOfferInput } from "../machine.ts";
import type { MarketState } from "../state/market-state.ts";

/** What the market verified of one account, for the contracts it may promise it (policies/standing.ts facts). */
export interface ContractStanding {
  /** The account confirmed its address. */
  confirmed: boolean;
  /** Results of its machines accepted in agreement with another account that had standing. */
  verifiedResults: number;
  /** Days since the account was made, on the market's clock. */
  ageDays: number;
  /** Caught forging: it is promised nothing. */
  forged: boolean;
}

/** What a new account may be promised in contracts at once (credits), and what a confirmed address adds. */
export const CONTRACT_CEILING_NEW = 1;
export const CONTRACT_CEILING_CONFIRMED = 9;
/** What each verified result adds at full age; results count up to CONTRACT_CEILING_MAX_RESULTS. */
export const CONTRACT_CEILING_PER_RESULT = 0.1;
export const CONTRACT_CEILING_MAX_RESULTS = 1_000_000;
/** Days over which what verified results add grows to its full amount: results a fresh account piled up in a day count little. */
export const CONTRACT_CEILING_AGE_DAYS = 30;

/**
 * The most the market may owe one account in dedicated contracts at once (credits): a contract is
 * paid from the market's own account for capacity the machine has yet to prove, and an account
 * costs nothing to make, so an account that has proved little is promised little. 1 credit new,
 * 10 with a confirmed address, plus 0.1 per verified result scaled by the account's age up to 30
 * days (a confirmed account a month old with 1,000 verified results: 110); 0 once caught forging.
 */
export function contractCeiling(s: ContractStanding): number {
  if (s.forged) return 0;
  const results = Math.min(CONTRACT_CEILING_MAX_RESULTS, Math.max(0, Math.floor(s.verifiedResults) || 0));
  const age = Math.min(1, Math.max(0, s.ageDays || 0) / CONTRACT_CEILING_AGE_DAYS);
  return CONTRACT_CEILING_NEW + (s.confirmed ? CONTRACT_CEILING_CONFIRMED : 0) + CONTRACT_CEILING_PER_RESULT * results * age;
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
