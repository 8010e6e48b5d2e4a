// Producer accounts' standing as the live market applies it: the facts the market recorded
// (the Standing table), the engine's answer on them (costbenefit policies/standing.ts), and the
// quorum unit each account votes as. The service only records facts; the engine decides.
import { DEFAULT_STANDING_RULES, contractCeiling, standingOf, verifierOf, type ContractStanding, type Standing } from "@cyclemarket/costbenefit";
import { toCredits } from "../ledger/ledger.ts";
import type { Market } from "./market.ts";
import type { LiveState } from "./live.ts";
import type { Tx } from "../ledger/ledger.ts";
import { isMarketAccount } from "../auth/market-accounts.ts";
import { addStandingFacts, recentForgers, type StandingFactsRow } from "../db/sql/standing-facts.ts";
import { owedByContracts } from "../resources/contracts.ts";
import { runStatement } from "../db/sql/statement.ts";
import { viaPrisma } from "../db/sql/runners.ts";
import { machineChanged } from "./transitions.ts";

export type FactName = "verified" | "disagreements" | "unconfirmedFailures" | "expiredLeases" | "forgeries";
export type FactCounts = Record<FactName, number>;
const FACTS: FactName[] = ["verified", "disagreements", "unconfirmedFailures", "expiredLeases", "forgeries"];
const noFacts = (): FactCounts => ({ verified: 0, disagreements: 0, unconfirmedFailures: 0, expiredLeases: 0, forgeries: 0 });

/** A producer account as verification sees it. */
export interface LiveOwner {
  id: string;
  email: string;
  emailConfirmed: boolean;
  createdAt: number;
  /** The market's own account, or any account of a closed market (TRUST_ALL_PRODUCERS). */
  trusted: boolean;
  facts: FactCounts;
  /** Its standing score when its machines' profiles were last given it. */
  score?: number;
  /** Its quorum unit, once asked (verifierIn): an owner's row is read again, not changed, when its address or trust changes. */
  verifier?: string;
}

/** The market's verification settings: the secret seed of its spot checks, and whether every producer is trusted. */
export interface VerificationSettings {
  seed: string;
  trustAll: boolean;
}

/** The engine's standing of an account now; an account memory does not know has none. */
export function standingIn(state: LiveState, ownerId: string, now: number): Standing {
  const o = state.owners.get(ownerId);
  if (!o) return standingOf({ trusted: false, emailConfirmed: false, ageSeconds: 0, ...noFacts() });
  return standingOf({ trusted: o.trusted, emailConfirmed: o.emailConfirmed, ageSeconds: Math.max(0, (now - o.createdAt) / 1000), ...o.facts });
}

export const standingNow = (market: Market, ownerId: string) => standingIn(market.state, ownerId, market.clock.now());

/** The quorum's unit for an account: its organisation's confirmed domain, else itself (one account per domain). */
export function verifierIn(state: LiveState, ownerId: string): string {
  const o = state.owners.get(ownerId);
  if (!o) return `account:${ownerId}`;
  // A closed market counts accounts: its producers are known.
  return (o.verifier ??= o.trusted ? `account:${ownerId}` : verifierOf({ id: o.id, email: o.email, emailConfirmed: o.emailConfirmed }));
}

/**
 * The network a copy counts from in a quorum: the machine's (a public /24 or /48, where known),
 * or none for an account the market trusts (a closed market's producers may share one network).
 */
export function quorumNetwork(state: LiveState, ownerId: string, network: string | null | undefined): string | null {
  return state.owners.get(ownerId)?.trusted ? null : (network ?? null);
}

/** An account's standing from its rows (for views: the account may have no machine in memory). */
export function standingOfRow(market: Market, u: { email: string; emailVerified: boolean; createdAt: Date; standing: FactCounts | null }, now = market.clock.now()): Standing {
  const facts = noFacts();
  if (u.standing) for (const f of FACTS) facts[f] = u.standing[f];
  return standingOf({ trusted: market.verification.trustAll || isMarketAccount(u.email), emailConfirmed: u.emailVerified, ageSeconds: Math.max(0, (now - u.createdAt.getTime()) / 1000), ...facts });
}

/** What a view shows of an account's standing: the engine's answer and the facts behind it. */
export function standingView(market: Market, u: Parameters<typeof standingOfRow>[1]) {
  const s = standingOfRow(market, u);
  const facts = noFacts();
  if (u.standing) for (const f of FACTS) facts[f] = u.standing[f];
  return { has: s.has, score: s.score, net: s.net, spotCheck: s.spotCheck, forged: s.forged, steps: s.steps, facts };
}

/** What the facts behind an account's standing say for its contracts (costbenefit contractCeiling). */
function contractStanding(u: { emailConfirmed: boolean; createdAt: number; facts: FactCounts }, now: number): ContractStanding {
  return { confirmed: u.emailConfirmed, verifiedResults: u.facts.verified, ageDays: Math.max(0, now - u.createdAt) / 86_400_000, forged: u.facts.forgeries > 0 };
}

/** An account's contract standing, for an offer check (the account is in memory: loadOwners). */
export function contractStandingOf(market: Market, ownerId: string): ContractStanding {
  const o = market.state.owners.get(ownerId);
  return o ? contractStanding(o, market.clock.now()) : { confirmed: false, verifiedResults: 0, ageDays: 0, forged: false };
}

/**
 * A producer's own standing, for its page: the engine's answer, the facts behind it, the rules it
 * is measured by, and what it lets the account be promised in dedicated contracts.
 */
export async function ownStanding(market: Market, db: Pick<Market["db"], "user">, userId: string) {
  const u = await db.user.findUniqueOrThrow({ where: { id: userId }, select: { email: true, emailVerified: true, createdAt: true, standing: true } });
  const view = standingView(market, u);
  const ceiling = contractCeiling(contractStanding({ emailConfirmed: u.emailVerified, createdAt: u.createdAt.getTime(), facts: view.facts }, market.clock.now()));
  return { ...view, confirmed: u.emailVerified, rules: DEFAULT_STANDING_RULES, contractCeiling: ceiling, contractsOwed: toCredits((await owedByContracts(viaPrisma(market.db), userId)).owner) };
}

/** Reads accounts into memory (a machine joined, the market restarted, an address was confirmed). */
export async function loadOwners(market: Market, ids: Iterable<string>, db: Pick<Market["db"], "user"> = market.db): Promise<void> {
  const want = [...new Set(ids)];
  if (!want.length) return;
  const rows = await db.user.findMany({ where: { id: { in: want } }, select: { id: true, email: true, emailVerified: true, createdAt: true, standing: true } });
  for (const u of rows) {
    const facts = noFacts();
    if (u.standing) for (const f of FACTS) facts[f] = u.standing[f];
    market.state.owners.set(u.id, {
      id: u.id,
      email: u.email,
      emailConfirmed: u.emailVerified,
      createdAt: u.createdAt.getTime(),
      trusted: market.verification.trustAll || isMarketAccount(u.email),
      facts,
    });
  }
  syncMachines(market, want);
}

/** Facts to add, by account: collected while a report is decided, written with it. */
export class FactChanges {
  private readonly by = new Map<string, FactCounts>();
  add(ownerId: string, fact: FactName, n = 1): void {
    if (n <= 0) return;
    const c = this.by.get(ownerId) ?? noFacts();
    c[fact] += n;
    this.by.set(ownerId, c);
  }
  get empty(): boolean {
    return this.by.size === 0;
  }
  /** Writes them in `tx`; the returned function updates memory once it committed. */
  async write(market: Market, tx: Tx): Promise<() => void> {
    if (this.empty) return () => {};
    const users = [...this.by.keys()];
    const col = (f: FactName) => users.map((u) => this.by.get(u)![f]);
    const rows = await runStatement(viaPrisma(tx), addStandingFacts, {
      users,
      verified: col("verified"),
      disagreements: col("disagreements"),
      unconfirmedFailures: col("unconfirmedFailures"),
      expiredLeases: col("expiredLeases"),
      forgeries: col("forgeries"),
      now: market.clock.now(),
    });
    return () => applyFacts(market, rows);
  }
}

/**
 * Accounts caught forging by another Market Manager since this one last looked: their facts as
 * recorded, for the accounts this manager holds, so a forger's standing is gone here too (its
 * copies no longer count in a quorum, its single results are checked). Called once a stamp
 * (market/adopt.ts). Each look reaches back `lookbackMs` before the last, so a fact written by a
 * host whose clock is behind this one's is not missed; forgers are few, and reading one again
 * changes nothing.
 */
export async function learnForgeries(market: Market, lookbackMs: number): Promise<void> {
  const now = market.clock.now();
  const since = (market.resources.forgersLookedAt ?? now) - lookbackMs;
  const rows = (await runStatement(viaPrisma(market.db), recentForgers, { since })).filter((r) => market.state.owners.has(r.userId));
  market.resources.forgersLookedAt = now;
  if (rows.length) await market.serial(async () => applyFacts(market, rows));
}

function applyFacts(market: Market, rows: StandingFactsRow[]): void {
  for (const r of rows) {
    const o = market.state.owners.get(r.userId);
    if (!o) continue;
    for (const f of FACTS) o.facts[f] = Number(r[f]);
  }
  syncMachines(market, rows.map((r) => r.userId));
}

/** The engine plans on each machine with its owner's standing score (its profile's reputation). */
function syncMachines(market: Market, ownerIds: string[]): void {
  const now = market.clock.now();
  const changed = new Map<string, number>();
  for (const id of ownerIds) {
    const o = market.state.owners.get(id);
    if (!o) continue;
    const score = standingIn(market.state, id, now).score;
    if (o.score === score) continue;
    o.score = score;
    changed.set(id, score);
  }
  if (!changed.size) return;
  for (const m of market.state.machines.values()) {
    const score = changed.get(m.ownerId);
    if (score === undefined || score === m.reputation) continue;
    m.reputation = score;
    machineChanged(market, m, now);
  }
}
