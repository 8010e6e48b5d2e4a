// docs/DESIGN.md "Dedicated purchase rule" (the Java Market paper, 5.5.2: dedicated machines "should be purchased
// based on the price the system would put on that resource immediately after accepting it").
import { resourceCostSlopeLn } from "../cost.ts";
import type { OfferDecision } from "../decision.ts";
import { DedicatedOffer, type DedicatedOfferInput } from "../machine.ts";
import type { MarketState } from "../state/market-state.ts";
import type { AccountCeiling } from "../contract-ceiling.ts";

/**
 * Accept iff the contract price is at most the value of the compute the machine adds over
 * [now, dp), priced at the market's current unit quote: the cheapest linearized marginal cost
 * per work unit among the machines already there (with n + 1 machines). The offered machine's own
 * idle quote is not used: it is P ln(n) / (capacity H), so capacity x time x quote would not depend
 * on the machine's size or on how busy the market is.
 */
export function considerDedicatedOffer(state: MarketState, input: DedicatedOfferInput, now: number, budget = Infinity, account?: AccountCeiling): OfferDecision {
  const offer = DedicatedOffer.parse(input);
  if (offer.departureAt <= now) return { accept: false, reasons: [{ code: "offer-expired", departureAt: offer.departureAt, now }] };
  // One account is promised no more than its ceiling (contract-ceiling.ts), whatever its capacity is worth.
  if (account && offer.contractPrice > account.ceiling - account.promised) {
    return { accept: false, reasons: [{ code: "offer-over-ceiling", contractPrice: offer.contractPrice, ceiling: account.ceiling, promised: account.promised }] };
  }
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
