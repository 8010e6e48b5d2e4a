import { contractCeiling } from "@cyclemarket/costbenefit";
import type { Caller } from "../api/trpc.ts";
import type { Market } from "../market/market.ts";
import { toCredits } from "../ledger/ledger.ts";

/**
 * A producer's standing as the market counts it today, from facts it verified itself: whether the
 * account confirmed its address (its copies then count in a replica quorum) and how many results
 * of its machines the market accepted; from them the engine's ceiling on what the market may owe it
 * in dedicated contracts, and what those contracts still owe.
 */
export async function accountStanding(market: Market, caller: Pick<Caller, "id" | "emailVerified">) {
  const acceptedResults = await market.db.result.count({ where: { accepted: true, machine: { ownerId: caller.id } } });
  let owed = 0n;
  for (const m of market.state.machines.values()) if (m.ownerId === caller.id && m.contractPriceMicro !== null) owed += m.contractPriceMicro - m.contractPaidMicro;
  return {
    confirmed: caller.emailVerified,
    countsInQuorum: caller.emailVerified,
    acceptedResults,
    contractCeiling: contractCeiling({ confirmed: caller.emailVerified, acceptedResults }),
    contractsOwed: toCredits(owed),
  };
}
