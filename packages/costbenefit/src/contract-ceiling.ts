// docs/DESIGN.md "Dedicated pay for proven capacity". What the market may promise one account in
// dedicated contracts at once is bounded by what it verified of that account: a fresh account
// costs nothing to make, so without a bound one could be promised the market's whole budget.
// The facts are the ones the market holds now; the function is named for what it bounds so that
// it can take the account's standing instead once the market computes one.

/** What the market verified of a producer account. */
export interface CeilingFacts {
  /** Results of the account's machines accepted in agreement with a machine of another owner. */
  verifiedResults: number;
  /** The account's address is confirmed. */
  confirmed: boolean;
  /** Days since the account was made. */
  ageDays: number;
}

/** A new account's ceiling (credits): enough to try a dedicated machine, not to drain the market. */
export const NEW_ACCOUNT_CEILING = 1;
/** Added once the address is confirmed. */
export const CONFIRMED_CEILING = 9;
/** Added per verified result, at full age; results count up to MAX_COUNTED_RESULTS. */
export const CEILING_PER_RESULT = 0.1;
export const MAX_COUNTED_RESULTS = 100_000;
/** Days over which what verified results add grows to its full amount: results piled up in a day by a fresh account count little. */
export const CEILING_AGE_DAYS = 30;

/**
 * The most the market may have promised one account in dedicated contracts at once (credits):
 * NEW_ACCOUNT_CEILING, plus CONFIRMED_CEILING with a confirmed address, plus CEILING_PER_RESULT per
 * verified result, scaled by the account's age up to CEILING_AGE_DAYS. A new account gets 1
 * credit; a confirmed one 10; a confirmed account a month old with 1,000 verified results 110.
 */
export function contractCeiling(f: CeilingFacts): number {
  const results = Math.min(MAX_COUNTED_RESULTS, Math.max(0, Math.floor(f.verifiedResults) || 0));
  const age = Math.min(1, Math.max(0, f.ageDays || 0) / CEILING_AGE_DAYS);
  return NEW_ACCOUNT_CEILING + (f.confirmed ? CONFIRMED_CEILING : 0) + CEILING_PER_RESULT * results * age;
}

/** An account's ceiling and what its live contracts still promise it (credits): an offer must fit in the difference. */
export interface AccountCeiling {
  ceiling: number;
  promised: number;
}
