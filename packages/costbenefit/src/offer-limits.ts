// The machine offers the market believes (the Java Market paper, 5.5.2: the Resource Manager
// takes a machine's profile after its benchmark). The worker's wire schema refuses anything
// outside these ranges at the edge, and the Market Manager asks offerFault of every offer,
// whichever way it arrived. Plain numbers, no imports: the worker's bundle carries this file alone.

export const OFFER_LIMITS = {
  /**
   * A slot's benchmark speed, in reference machines: one claiming more than `maxSpeed` is not
   * believed (the benchmark kernel cannot run that fast on any hardware we know of), and one
   * under `minSpeed` would take a hundred times a task's estimate.
   */
  minSpeed: 0.01,
  maxSpeed: 50,
  /** Tasks one machine runs at once. */
  minSlots: 1,
  maxSlots: 256,
  /** Memory per slot, MB. */
  minMemoryPerSlotMb: 16,
  maxMemoryPerSlotMb: 1_048_576,
  /** A machine's network, in bytes per second. */
  minBandwidth: 1000,
  maxBandwidth: 1e12,
  /** The smallest price above nothing: one micro-credit, the ledger's unit (a smaller one would be paid as 0). */
  minPrice: 0.000001,
  /** The most a machine may ask per second of use, and for a whole dedicated contract (credits). */
  maxPricePerSecond: 1_000_000,
  maxContractPrice: 1_000_000_000,
} as const;

/** Why an offer is refused whatever the market holds; data, rendered at the edge. */
export type OfferFault =
  | { code: "implausible-speed"; speed: number; min: number; max: number }
  | { code: "negative-price"; price: number }
  | { code: "incomplete-offer" }
  | { code: "dedicated-offered-to-several" };

/**
 * The first fault of an offer no market takes (an unbelievable speed, a negative price, a dedicated
 * offer without its terms or offered to several managers), or null. `offerKey` is set when the
 * machine is offered to several Market Managers at once (the Java Market paper, section 4.4: the
 * schedulers' subsets may intersect).
 */
export function offerFault(offer: { kind: "opportunistic" | "dedicated"; speed: number; pricePerSecond: number; departsAt?: number | undefined; contractPrice?: number | undefined; offerKey?: string | undefined }): OfferFault | null {
  const { minSpeed: min, maxSpeed: max } = OFFER_LIMITS;
  if (!(offer.speed >= min && offer.speed <= max)) return { code: "implausible-speed", speed: offer.speed, min, max };
  if (offer.pricePerSecond < 0) return { code: "negative-price", price: offer.pricePerSecond };
  if (offer.kind === "dedicated" && (offer.departsAt === undefined || offer.contractPrice === undefined)) return { code: "incomplete-offer" };
  // A contract buys the machine's hours whether tasks come or not: each manager's contract for the
  // same hours would pay them again. Only an opportunistic machine, paid by the task, is shared.
  if (offer.kind === "dedicated" && offer.offerKey !== undefined) return { code: "dedicated-offered-to-several" };
  return null;
}
