import type { Prepared } from "../db/client.ts";
import { runStatement } from "../db/sql/statement.ts";
import { prepared } from "../db/sql/runners.ts";
import { producersEarnedSince } from "../db/sql/producer-earnings.ts";
import type { Market } from "../market/market.ts";
import type { LiveMachine } from "../market/live.ts";
import { toCredits } from "../ledger/ledger.ts";
import { HOUR } from "../ledger/statement.ts";

/** A machine is like this one when its speed is within this factor of it, either way. */
const SIMILAR_SPEED = 2;
/** Fewer similar machines than this say little: the going rate is then read from every machine. */
const FEWEST_SIMILAR = 3;
/** Owners whose last hour is read, at most: the statement stays one index range each. */
const MAX_OWNERS = 50;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * The going rate for a producer setting its price (the Produce page): what the opportunistic
 * machines of other owners in the market ask, those of a speed like `speed` when there are a few
 * of them, and what they earned in the last hour, each machine its owner's last hour shared
 * evenly between the owner's machines in the market now.
 */
export async function goingRate(market: Market, reads: Prepared, callerId: string, speed: number | null, now: number) {
  const others = [...market.state.machines.values()].filter((m) => m.kind === "opportunistic" && m.ownerId !== callerId);
  const like = speed === null ? [] : others.filter((m) => m.speed <= speed * SIMILAR_SPEED && m.speed >= speed / SIMILAR_SPEED);
  const similar = like.length >= FEWEST_SIMILAR;
  const machines: LiveMachine[] = similar ? like : others;
  if (machines.length === 0) return { machines: 0, similar, speedRange: null, ask: null, earnedLastHour: null };
  const asks = machines.map((m) => toCredits(m.pricePerSecondMicro));
  const perOwner = new Map<string, number>();
  for (const m of machines) perOwner.set(m.ownerId, (perOwner.get(m.ownerId) ?? 0) + 1);
  const owners = [...perOwner.keys()].slice(0, MAX_OWNERS);
  const rows = await runStatement(prepared(reads), producersEarnedSince, { producerIds: owners, since: now - HOUR });
  // Each owner's hour split over all its machines in the market (not only the similar ones).
  const machinesOf = new Map<string, number>();
  for (const m of market.state.machines.values()) if (perOwner.has(m.ownerId)) machinesOf.set(m.ownerId, (machinesOf.get(m.ownerId) ?? 0) + 1);
  const earned = rows.flatMap((r) => Array<number>(perOwner.get(r.owner) ?? 0).fill(toCredits(BigInt(r.micro)) / (machinesOf.get(r.owner) ?? 1)));
  return {
    /** How many machines the figures are read from. */
    machines: machines.length,
    /** Whether they are machines of a speed like the caller's (else every machine of other owners). */
    similar,
    speedRange: similar && speed !== null ? ([speed / SIMILAR_SPEED, speed * SIMILAR_SPEED] as const) : null,
    /** Credits a second they ask. */
    ask: { low: Math.min(...asks), median: median(asks), high: Math.max(...asks) },
    /** Credits a machine earned in the last hour. */
    earnedLastHour: earned.length ? { median: median(earned), high: Math.max(...earned) } : null,
  };
}
